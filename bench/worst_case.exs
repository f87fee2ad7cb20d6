# Worst-case timings (make worst-case): every hostile input class of test/rusty_json/hostile_input_test.exs at two
# sizes 10x apart, the time RustyJson takes on each (a clean result or a clean error), and the growth of that time
# from the small size to the large one (about 10 when the time is linear in the size). Prints a Markdown table,
# sorted by time per byte at the large size: the first row is the worst case.
#
#   mix run bench/worst_case.exs            # options: --runs N (timed runs per input, the minimum is kept;
#                                           # default 3), --scale F (multiplies every size; default 1.0),
#                                           # --out PATH (also write the table), --only TEXT (classes whose
#                                           # name contains TEXT; `--only depth`: the depth table alone)
#
# Then a second table: lists and maps nested 100k to 1M deep, encoded and decoded, jiffy beside (when its
# package is installed; "error" where it refuses or crashes): the time must grow linearly with the depth.
#
# Each call runs in a fresh process, as in a request process; the time includes the scheduler hop to a dirty
# scheduler and the garbage collection that moves a decoded term into the process's heap.
import Bitwise
Code.require_file("../test/support/apt_libs.exs", __DIR__)
# jiffy where the VM's suite packages it (not in Debian sid).
RustyJson.AptLibs.add_paths_if_present([:jiffy])
Code.require_file("timed_calls.exs", __DIR__)

defmodule RustyJson.Bench.WorstCase do
  @moduledoc false
  alias RustyJson.Bench.TimedCalls

  def main(argv) do
    {opts, _} =
      OptionParser.parse!(argv,
        strict: [runs: :integer, scale: :float, out: :string, only: :string]
      )

    runs = opts[:runs] || 3
    scale = opts[:scale] || 1.0

    rows =
      for {name, op, small, build} <- classes(),
          opts[:only] == nil or String.contains?(name, opts[:only]) do
        n1 = max(1, round(small * scale))
        [a, b] = for n <- [n1, 10 * n1], do: measure(build, n, runs)
        IO.puts(:stderr, "#{name}: #{us(a.us)} -> #{us(b.us)}")
        %{name: name, op: op, small: a, large: b}
      end

    rows = Enum.sort_by(rows, &(-&1.large.us / &1.large.bytes))
    tables = if rows == [], do: [], else: [table(rows, runs)]

    tables =
      if opts[:only] in [nil, "depth"],
        do: tables ++ [depth_table(round(scale * 100_000), runs)],
        else: tables

    text = Enum.join(tables, "\n\n")
    IO.puts(text)
    if opts[:out], do: File.write!(opts[:out], text <> "\n")
  end

  # Nesting depth: the encoder keeps each slice's checkpoint to the frames that slice touched (the frames under
  # them are shared from the previous checkpoint), so its time, like the decoder's, grows linearly with the depth.
  defp depth_table(base, runs) do
    jiffy? = Code.ensure_loaded?(:jiffy)

    rows =
      for {kind, nest} <- [lists: &[&1], maps: &%{"a" => &1}],
          n <- Enum.map([1, 2, 4, 10], &(&1 * base)) do
        term = Enum.reduce(1..n, 1, fn _, acc -> nest.(acc) end)
        json = RustyJson.encode!(term)
        encode = TimedCalls.run(fn -> ok(RustyJson.encode(term)) end, runs)
        decode = TimedCalls.run(fn -> ok(RustyJson.decode(json)) end, runs)
        jiffy_encode = if jiffy?, do: jiffy(fn -> :jiffy.encode(term) end, runs)
        jiffy_decode = if jiffy?, do: jiffy(fn -> :jiffy.decode(json, [:return_maps]) end, runs)

        IO.puts(
          :stderr,
          "#{kind} #{fmt_n(n)} deep: encode #{us(encode.us)}, decode #{us(decode.us)}"
        )

        "| #{kind} | #{fmt_n(n)} | #{us(encode.us)} | #{jiffy_us(jiffy_encode)} | " <>
          "#{us(decode.us)} | #{jiffy_us(jiffy_decode)} | #{hold(encode.hold_ms)} / #{hold(decode.hold_ms)} |"
      end

    Enum.join(
      [
        "| nested | depth | RustyJson encode | jiffy encode | RustyJson decode | jiffy decode | longest normal-scheduler hold (RustyJson encode / decode) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |" | rows
      ],
      "\n"
    ) <>
      "\n\n`[[[...1]]]` and `%{\"a\" => %{\"a\" => ...1}}`; minimum of #{runs} runs, each call in a fresh " <>
      "process." <> if(jiffy?, do: "", else: " jiffy is not installed (-).")
  end

  # jiffy's time, or :error when it refuses the input or crashes (deep input can exhaust what it allows).
  defp jiffy(call, runs) do
    tried =
      Task.async(fn ->
        try do
          call.()
          :ok
        catch
          _, _ -> :error
        end
      end)

    case Task.await(tried, :infinity) do
      :ok -> TimedCalls.run(fn -> call.() end, runs)
      :error -> :error
    end
  end

  defp jiffy_us(nil), do: "-"
  defp jiffy_us(:error), do: "error"
  defp jiffy_us(%{us: t}), do: us(t)

  # {name, operation, small size parameter, fn n -> {input size in bytes, the call}}. The call returns :ok only
  # for the expected outcome, so a wrong answer stops the script.
  defp classes do
    [
      {"arrays nested n deep", "decode", 100_000,
       fn n ->
         json = String.duplicate("[", n) <> "1" <> String.duplicate("]", n)
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"objects nested n deep", "decode", 100_000,
       fn n ->
         json = String.duplicate(~s({"a":), n) <> "1" <> String.duplicate("}", n)
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"lists nested n deep", "encode", 100_000,
       fn n ->
         {2 * n + 1, fn -> ok(RustyJson.encode(Enum.reduce(1..n, 1, fn _, acc -> [acc] end))) end}
       end},
      {"maps nested n deep", "encode", 100_000,
       fn n ->
         {6 * n + 1,
          fn -> ok(RustyJson.encode(Enum.reduce(1..n, 1, fn _, acc -> %{"a" => acc} end))) end}
       end},
      {"string of n bytes, no escapes", "decode", 10_000_000,
       fn n ->
         json = "\"" <> String.duplicate("a", n) <> "\""
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"string of n bytes, 10% escapes", "decode", 10_000_000,
       fn n ->
         json = "\"" <> String.duplicate("abcdefghi\\n", div(n, 11)) <> "\""
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"string of n bytes, non-ASCII", "decode", 10_000_000,
       fn n ->
         json = "\"" <> String.duplicate("é😀", div(n, 6)) <> "\""
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"string of n bytes, invalid UTF-8 at the end", "decode", 10_000_000,
       fn n ->
         json = "\"" <> String.duplicate("a", n) <> <<0xFF>> <> "\""
         {byte_size(json), fn -> error(RustyJson.decode(json)) end}
       end},
      {"string of n bytes, 10% escapes", "encode", 10_000_000,
       fn n ->
         s = String.duplicate("abcdefghi\n", div(n, 10))
         {byte_size(s), fn -> ok(RustyJson.encode(s)) end}
       end},
      {"integer token of n digits (rejected)", "decode", 100_000,
       fn n ->
         json = String.duplicate("7", n)
         {n, fn -> error(RustyJson.decode(json)) end}
       end},
      {"fraction of n digits", "decode", 100_000,
       fn n ->
         json = "0." <> String.duplicate("7", n)
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"exponent of n digits (rejected)", "decode", 100_000,
       fn n ->
         json = "1e" <> String.duplicate("7", n)
         {byte_size(json), fn -> error(RustyJson.decode(json)) end}
       end},
      {"object of n keys", "decode", 100_000,
       fn n ->
         json = keys_object(n, "")
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"object of n keys, the last a duplicate", "decode", 100_000,
       fn n ->
         json = keys_object(n, ~s(,"k1":0))
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"object of n copies of one key", "decode", 100_000,
       fn n ->
         json = "{" <> Enum.map_join(1..n, ",", fn _ -> ~s("a":1) end) <> "}"
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"map of n keys", "encode", 100_000,
       fn n ->
         map = Map.new(1..n, &{"k#{&1}", &1})
         {byte_size(keys_object(n, "")), fn -> ok(RustyJson.encode(map)) end}
       end},
      {"n objects of keys colliding in the intern cache", "decode keys: :intern", 2_000,
       fn n ->
         pool = colliding_keys(64)

         json =
           "[" <>
             Enum.map_join(1..n, ",", fn i ->
               "{" <>
                 Enum.map_join(0..15, ",", &~s("#{Enum.at(pool, rem(i * 7 + &1 * 3, 64))}":#{&1})) <>
                 "}"
             end) <> "]"

         {byte_size(json), fn -> ok(RustyJson.decode(json, keys: :intern)) end}
       end},
      {"random bytes", "decode", 1_000_000,
       fn n ->
         :rand.seed(:exsss, {7, 8, 9})
         input = :rand.bytes(n)
         {n, fn -> error(RustyJson.decode(input)) end}
       end},
      {"brackets n deep, pretty-printed (output quadratic in n)", "Formatter.pretty_print", 2_000,
       fn n ->
         json = String.duplicate("[", n) <> String.duplicate("]", n)
         {byte_size(json), fn -> bin(RustyJson.Formatter.pretty_print(json)) end}
       end},
      {"string of n bytes, escape-dense (`\\n`, `\\u00e9`)", "decode", 5_000_000,
       fn n ->
         json = "\"" <> String.duplicate("ab\\ncd\\u00e9", div(n, 12)) <> "\""
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"object key of n bytes, escape-dense", "decode", 5_000_000,
       fn n ->
         json = "{\"" <> String.duplicate("ab\\ncd\\u00e9", div(n, 12)) <> "\":1}"
         {byte_size(json), fn -> ok(RustyJson.decode(json)) end}
       end},
      {"pretty indent of n bytes", "encode pretty", 5_000_000,
       fn n ->
         indent = String.duplicate(" ", n)
         {n, fn -> ok(RustyJson.encode([[1]], pretty: [indent: indent])) end}
       end},
      {"fragment of an iolist of n pieces", "encode", 500_000,
       fn n ->
         fragment = RustyJson.Fragment.new(List.duplicate("1", n))
         {n, fn -> ok(RustyJson.encode(%{a: fragment})) end}
       end},
      {"bignum map key of n bytes, sort_keys", "encode", 40_000,
       fn n ->
         map = %{:binary.decode_unsigned(:binary.copy(<<0x5A>>, n)) => 1, 2 => 3}
         {n, fn -> ok(RustyJson.encode(map, sort_keys: true)) end}
       end},
      {"integer of n digits, digit limit raised", "decode", 30_000,
       fn n ->
         json = String.duplicate("7", n)
         {n, fn -> ok(RustyJson.decode(json, decoding_integer_digit_limit: n)) end}
       end},
      {"document truncated before its last byte", "decode", 1_000,
       fn n ->
         json = RustyJson.encode!(api_list(n))
         cut = binary_part(json, 0, byte_size(json) - 1)
         {byte_size(cut), fn -> error(RustyJson.decode(cut)) end}
       end}
    ]
  end

  defp keys_object(n, extra),
    do: "{" <> Enum.map_join(1..n, ",", &~s("k#{&1}":#{&1})) <> extra <> "}"

  # Keys of 8 bytes that all land in the same slot of the intern cache (native/rustyjson_core/src/intern.rs:
  # a key of up to 16 bytes is hashed from its bytes as two words, `(a ^ rotl(b, 29) ^ len) * K >> 40`, and
  # takes slot `hash & 1023`); its probes (4 slots) then hold only the first 4 of them.
  defp colliding_keys(count) do
    target = slot("k0000000")

    Stream.iterate(1, &(&1 + 1))
    |> Stream.map(&("k" <> String.pad_leading(Integer.to_string(&1, 36), 7, "0")))
    |> Stream.filter(&(slot(&1) == target))
    |> Enum.take(count)
  end

  defp slot(<<a::little-64>> = key) do
    h = bxor(a, byte_size(key)) * 0x9E3779B97F4A7C15 &&& 0xFFFFFFFFFFFFFFFF
    h >>> 40 &&& 1023
  end

  defp api_list(n) do
    for i <- 1..n do
      %{
        "id" => i,
        "name" => "User #{i}",
        "email" => "user#{i}@example.com",
        "tags" => ["tag#{rem(i, 7)}", "tag#{rem(i, 11)}"],
        "geo" => [i / 7, -i / 9],
        "note" => "Línea #{i} — \"quoted\" text\n"
      }
    end
  end

  defp ok({:ok, _}), do: :ok
  defp bin(binary) when is_binary(binary), do: :ok
  defp error({:error, %{__exception__: true}}), do: :ok

  # Minimum over `runs` of the call's time in a fresh process.
  defp measure(build, n, runs) do
    {bytes, call} = build.(n)

    # The call's result is checked in the process that runs it (a clean result or a clean error).
    timed = TimedCalls.run(fn -> :ok = call.() end, runs)
    Map.merge(%{n: n, bytes: bytes}, timed)
  end

  defp table(rows, runs) do
    body =
      for r <- rows do
        growth = r.large.us / max(r.small.us, 1)

        "| #{r.name} | #{r.op} | #{fmt_n(r.small.n)} / #{fmt_n(r.large.n)} | " <>
          "#{bytes(r.small.bytes)} / #{bytes(r.large.bytes)} | #{us(r.small.us)} / #{us(r.large.us)} | " <>
          "#{:erlang.float_to_binary(growth, decimals: 1)} | " <>
          "#{:erlang.float_to_binary(r.large.us * 1000 / r.large.bytes, decimals: 1)} | " <>
          "#{hold(r.large.hold_ms)} |"
      end

    Enum.join(
      [
        "| input class | operation | n (small / large) | size | time | time growth (10x size) | ns per byte (large) | longest normal-scheduler hold (large) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |" | body
      ],
      "\n"
    ) <>
      "\n\nMinimum of #{runs} runs per input, each call in a fresh process. The hold is the longest " <>
      "`long_schedule` the VM reported over those runs (under 1 ms: not reported)."
  end

  defp hold(0), do: "< 1 ms"
  defp hold(ms), do: "#{ms} ms"

  defp fmt_n(n) when n >= 1_000_000, do: "#{div(n, 1_000_000)}M"
  defp fmt_n(n) when n >= 1_000, do: "#{div(n, 1_000)}k"
  defp fmt_n(n), do: "#{n}"

  defp bytes(b) when b >= 1_000_000,
    do: :erlang.float_to_binary(b / 1_000_000, decimals: 1) <> " MB"

  defp bytes(b) when b >= 1_000, do: :erlang.float_to_binary(b / 1_000, decimals: 1) <> " KB"
  defp bytes(b), do: "#{b} B"

  defp us(t) when t >= 1_000_000, do: :erlang.float_to_binary(t / 1_000_000, decimals: 2) <> " s"
  defp us(t) when t >= 1000, do: :erlang.float_to_binary(t / 1000, decimals: 1) <> " ms"
  defp us(t), do: "#{t} µs"
end

RustyJson.Bench.WorstCase.main(System.argv())
