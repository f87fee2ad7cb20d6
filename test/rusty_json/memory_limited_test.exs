defmodule RustyJson.MemoryLimitedTest.Cases do
  @moduledoc false
  # The cases of the issue "No input aborts the VM or is killed for memory, even with memory limited", and a
  # seeded generated set. A case is `{label, expectation, code}`: `code` is an expression the child VM evaluates
  # to `{:ok, _}` or `{:error, exception}` (or it raises one of the library's exceptions). Expectations:
  # `:clean` (any of those), `:ok`, `:error`, and `:bytes_error` (an error whose message names a size in bytes:
  # the output could not fit in the child's 4 GB, so nothing but an error is right).

  # An estimated output above this cannot fit under the ulimit with its input and buffers.
  @too_big 6_000_000_000
  # Outputs estimated between these are redrawn: writing gigabytes costs seconds and the smaller and the larger
  # cases already cover what they would.
  @slow {1_000_000_000, 10_000_000_000}

  @doc "The issue's own cases, each `{label, expectation, timeout_s, code}`."
  def named do
    endless = fn head, fill ->
      """
      chunks = Stream.repeatedly(fn -> :binary.copy(#{inspect(fill)}, 1_048_576) end) |> Stream.take(3000)
      opts = [at: "/a", max_bytes: 1_000_000]
      {:ok, Stream.concat([[#{inspect(head)}], chunks]) |> RustyJson.Stream.decode_array(opts) |> Enum.to_list()}
      """
    end

    [
      {"pretty_print_600k_deep", :bytes_error, 240,
       "{:ok, RustyJson.Formatter.pretty_print(Gen.brackets(600_000))}"},
      {"pretty_print_100k_deep_indent_100", :bytes_error, 240,
       "{:ok, RustyJson.Formatter.pretty_print(Gen.brackets(100_000), indent: 100)}"},
      {"fragment_600k_deep_in_pretty_encode", :bytes_error, 240,
       "RustyJson.encode([RustyJson.Fragment.new!(Gen.brackets(600_000))], pretty: true)"},
      {"list_100k_deep_pretty_encode", :bytes_error, 240,
       "RustyJson.encode(Gen.list(100_000), pretty: true)"},
      {"stream_endless_string_beside_path", :clean, 240, endless.(~s({"b":"), "a")},
      {"stream_endless_number_beside_path", :clean, 240, endless.(~s({"b":1), "1")},
      {"stream_endless_key", :clean, 240, endless.(~s({"), "a")},
      {"stream_endless_string_after_array", :clean, 240, endless.(~s({"a":[1,2],"b":"), "a")},
      {"decode_100mb_keys_30_times", :ok, 300,
       """
       input = fn r ->
         pairs = Enum.map_intersperse(1..40, ",", fn i -> ~s("\#{:binary.copy("k", 2_500_000)}\#{i}_\#{r}":\#{i}) end)
         IO.iodata_to_binary(["{", pairs, "}"])
       end
       # The VM's own garbage (each round's 100 MB input, its parts and the decoded keys) is collected first:
       # left to the VM's schedule it can lag rounds behind and fill the 4 GB by itself (OTP 27 once aborted in
       # binary_alloc building round 20's input). What this case holds bounded is the library's native memory.
       Enum.reduce_while(1..30, {:ok, 0}, fn r, _ ->
         :erlang.garbage_collect()
         case RustyJson.decode(input.(r)) do
           {:ok, _} -> {:cont, {:ok, r}}
           error -> {:halt, error}
         end
       end)
       """},
      {"fragment_70m_open_brackets", :error, 240,
       ~s|{:ok, RustyJson.Fragment.new!(:binary.copy("[", 70_000_000))}|},
      {"get_70m_open_brackets", :error, 240,
       ~s|RustyJson.get(:binary.copy("[", 70_000_000), "/0")|},
      {"decode_150m_zeros", :clean, 300,
       ~s|RustyJson.decode("[" <> :binary.copy("0,", 150_000_000) <> "0]")|},
      {"encode_pretty_10g_spaces", :bytes_error, 240,
       "{:ok, RustyJson.encode!([1], pretty: 10_000_000_000)}"},
      {"pretty_print_indent_10g", :bytes_error, 240,
       ~s|{:ok, RustyJson.Formatter.pretty_print("[1]", indent: 10_000_000_000)}|},
      {"decimal_1e2000000000_encode", :clean, 240,
       ~s|{:ok, RustyJson.decode!("1e2000000000", floats: :decimals) \|> RustyJson.encode!()}|},
      {"pretty_indent_quote", :error, 60, ~s|RustyJson.encode(%{"a" => [1]}, pretty: "\\"")|},
      {"pretty_indent_invalid_utf8", :error, 60,
       ~s|RustyJson.encode(%{"a" => [1]}, pretty: <<0xFF>>)|}
    ]
  end

  @doc """
  The generated cases, one child VM each: the same every run (seeded). Each case its own child, because the memory
  a case's allocators keep after it (the VM's carriers, mimalloc's arenas) is address space the next case in that
  child could not use under the limit; `RUSTYJSON_MEMORY_LIMITED_BATCH=n` puts n in a child (faster, to explore).
  """
  def generated do
    :rand.seed(:exsss, {1, 2, 3})

    [
      times(6, &deep_encode/0),
      times(6, &formatter/0),
      times(4, &fragment/0),
      times(6, &escaped/0),
      times(2, &compressed/0),
      times(7, &decode/0)
    ]
    |> Enum.concat()
    |> Enum.chunk_every(String.to_integer(System.get_env("RUSTYJSON_MEMORY_LIMITED_BATCH", "1")))
  end

  defp times(n, fun), do: Enum.map(1..n, fn _ -> fun.() end)

  # Deep lists and maps, pretty: each level writes two lines indented by its depth, about indent * depth^2 bytes.
  defp deep_encode do
    depth = log_uniform(10_000, 1_000_000)
    {width, pretty} = Enum.random([{2, "true"}, {4, ~s([indent: "\\t\\t\\t\\t"])}])
    kind = Enum.random(["list", "map"])
    code = "RustyJson.encode(Gen.#{kind}(#{depth}), pretty: #{pretty})"
    sized("deep_#{kind}_#{depth}_indent#{width}", width * depth * depth, code, &deep_encode/0)
  end

  defp formatter do
    depth = log_uniform(10_000, 1_000_000)
    indent = Enum.random(1..200)
    code = "{:ok, RustyJson.Formatter.pretty_print(Gen.brackets(#{depth}), indent: #{indent})}"
    sized("pretty_print_#{depth}_indent#{indent}", indent * depth * depth, code, &formatter/0)
  end

  # A fragment is pretty-printed in place, at the depth of the value holding it.
  defp fragment do
    inner = log_uniform(10_000, 600_000)
    outer = Enum.random(1..2000)
    fragment = "RustyJson.Fragment.new!(Gen.brackets(#{inner}))"
    code = "RustyJson.encode(Gen.list(#{outer}, #{fragment}), pretty: true)"
    depth = inner + outer
    sized("fragment_#{inner}_at_#{outer}", 2 * depth * depth, code, &fragment/0)
  end

  # Escape-heavy text of 10-200 MB, as a value or a key: up to 6 bytes out for each byte in.
  defp escaped do
    {bytes, seed, mode} = text_params()
    text = "Gen.escapy(#{bytes}, #{inspect(seed)})"
    {label, term} = Enum.random([{"string", text}, {"key", "%{#{text} => 1}"}])
    {"escaped_#{label}_#{bytes}_#{mode}", :clean, "RustyJson.encode(#{term}, escape: :#{mode})"}
  end

  defp compressed do
    {bytes, seed, mode} = text_params()
    opts = "escape: :#{mode}, pretty: true, compress: {:gzip, #{Enum.random(0..9)}}"
    term = "[Gen.escapy(#{bytes}, #{inspect(seed)}), Gen.list(5000)]"
    {"gzip_#{bytes}_#{mode}", :clean, "RustyJson.encode(#{term}, #{opts})"}
  end

  defp text_params do
    bytes = Enum.random(10..200) * 1_000_000
    seed = {Enum.random(1..1000), Enum.random(1..1000), Enum.random(1..1000)}
    {bytes, seed, Enum.random([:json, :unicode_safe, :html_safe, :javascript_safe])}
  end

  # Deep and wide inputs to decode, to get/3 and to Fragment.new!/1.
  defp decode do
    deep = log_uniform(100_000, 70_000_000)
    wide = log_uniform(1_000_000, 50_000_000)

    # Inputs that decode to a term larger than the limited VM's heap can take (closed brackets, an array of
    # numbers) stop at the ceiling the NIF learns from the address-space limit (`RustyJson.Native.info/0`).
    built = deep
    listed = wide

    Enum.random([
      {"decode_brackets_#{built}", ~s|RustyJson.decode(Gen.brackets(#{built}))|},
      {"decode_open_brackets_#{deep}", ~s|RustyJson.decode(:binary.copy("[", #{deep}))|},
      {"decode_open_objects_#{deep}", ~s|RustyJson.decode(:binary.copy(~s({"a":), #{deep}))|},
      {"decode_zeros_#{listed}",
       ~s|RustyJson.decode("[" <> :binary.copy("0,", #{listed}) <> "0]")|},
      {"decode_same_key_#{wide}",
       ~s|RustyJson.decode("{" <> :binary.copy(~s("k":1,), #{wide}) <> ~s("k":1}))|},
      {"decode_escapes_#{wide}",
       ~s|RustyJson.decode(~s(") <> :binary.copy("\\\\u00e9\\\\n", #{wide}) <> ~s("))|},
      {"get_brackets_#{deep}", ~s|RustyJson.get(Gen.brackets(#{deep}), "/0/0/0")|},
      {"fragment_brackets_#{deep}", ~s|{:ok, RustyJson.Fragment.new!(Gen.brackets(#{deep}))}|}
    ])
    |> then(fn {label, code} -> {label, :clean, code} end)
  end

  defp sized(label, estimate, code, redraw) do
    {low, high} = @slow

    cond do
      estimate >= low and estimate <= high -> redraw.()
      estimate > @too_big -> {label, :bytes_error, code}
      true -> {label, :clean, code}
    end
  end

  defp log_uniform(low, high), do: round(low * :math.pow(high / low, :rand.uniform()))
end

defmodule RustyJson.MemoryLimitedTest do
  # Hostile inputs in child VMs whose address space is limited to about 4 GB (`ulimit -v`): each case must end
  # in a result or a clean error and the child must exit normally; a Rust abort ("memory allocation of ...
  # failed"), a panic, or the VM's "Cannot allocate" is a failure with the child's output. The first tests prove
  # that the harness sees such failures. Cases the issue gives an outcome for are held to it.
  use ExUnit.Case, async: true

  alias RustyJson.ChildVM
  alias RustyJson.MemoryLimitedTest.Cases

  @moduletag :memory_limited
  @moduletag timeout: 900_000

  @forbidden [
    "memory allocation of",
    "panicked",
    "Crash dump",
    "stack backtrace",
    "Cannot allocate",
    "Cannot reallocate"
  ]

  # Defined in each child. One marker line per case with its outcome, never its value (it may be gigabytes);
  # any other exception escapes, and the child exits with status 1. Decimal is a stand-in with the library's
  # `to_string(_, :normal)` (Decimal is not a dependency; `floats: :decimals` needs the module loaded).
  @prelude ~S'''
  defmodule Case do
    @clean [RustyJson.EncodeError, RustyJson.DecodeError, RustyJson.PathError, ArgumentError]

    def run(label, fun) do
      outcome =
        try do
          describe(fun.())
        rescue
          e in @clean -> "error " <> message(e)
        end

      IO.puts("RESULT #{label} #{outcome}")
      :erlang.garbage_collect()
    end

    defp describe({:ok, _}), do: "ok"
    defp describe({:error, %{__exception__: true} = e}), do: "error " <> message(e)
    defp describe(other), do: "unexpected " <> inspect(other, limit: 5, printable_limit: 100)

    defp message(e), do: inspect(e.__struct__) <> ": " <> String.slice(Exception.message(e), 0, 300)
  end

  defmodule Gen do
    def brackets(d), do: String.duplicate("[", d) <> String.duplicate("]", d)
    def list(d, inner \\ []), do: Enum.reduce(1..d, inner, fn _, acc -> [acc] end)
    def map(d), do: Enum.reduce(1..d, 1, fn _, acc -> %{"a" => acc} end)

    # About `bytes` of text, mostly characters some escape mode rewrites: a seeded 16,384-character chunk, copied.
    def escapy(bytes, seed) do
      :rand.seed(:exsss, seed)
      palette = [<<0>>, <<31>>, "\n", "\"", "\\", "\u2028", "\u2029", "<", ">", "&", "'", "/", "é", "😀", "a"]
      chunk = IO.iodata_to_binary(for _ <- 1..16_384, do: Enum.random(palette))
      :binary.copy(chunk, div(bytes, byte_size(chunk)) + 1)
    end
  end

  defmodule Decimal do
    defstruct sign: 1, coef: 0, exp: 0

    def to_string(%{sign: sign, coef: coef, exp: exp}, :normal) do
      list = Integer.to_charlist(coef)
      diff = length(list) + exp

      list =
        cond do
          exp >= 0 -> list ++ :lists.duplicate(exp, ?0)
          diff > 0 -> List.insert_at(list, diff, ?.)
          true -> ~c"0." ++ :lists.duplicate(-diff, ?0) ++ list
        end

      IO.iodata_to_binary(if sign == -1, do: [?- | list], else: list)
    end
  end
  '''

  describe "the harness" do
    test "passes a child whose cases end cleanly, and allows a 1 GB allocation under the limit" do
      {output, status} =
        child([
          {"ok", ~s|{:ok, :binary.copy("x", 1_000_000_000)}|},
          {"error", ~s|RustyJson.decode("[")|},
          {"raised", ~s|{:ok, RustyJson.decode!("[")}|}
        ])

      assert problems(output, status, %{"ok" => :ok, "error" => :error, "raised" => :error}) == [],
             output
    end

    test "reports an abort after the marker, and an exit before it" do
      {output, status} = child([{"a", "{:ok, 1}"}], ":erlang.halt(134)")
      assert "exit status 134 (SIGABRT)" in problems(output, status, %{"a" => :ok})

      {output, status} = child([], "System.halt(1)")
      assert problems(output, status, %{"a" => :ok}) == ["exit status 1", "a: no RESULT line"]
    end

    test "reports an allocation past the ulimit" do
      {output, status} = child([{"big", ~s|{:ok, :binary.copy("x", 5_000_000_000)}|}])
      problems = problems(output, status, %{"big" => :clean})
      assert "exit status 1" in problems
      assert ~s(output has "Cannot allocate") in problems
      assert "big: no RESULT line" in problems
    end

    test "reports an abort message even when the child exits normally" do
      {output, status} =
        child([{"a", "{:ok, 1}"}], ~s|IO.puts("memory allocation of 8 bytes failed")|)

      assert problems(output, status, %{"a" => :ok}) == [~s(output has "memory allocation of")]
    end

    test "holds each case to its expected outcome" do
      output = """
      RESULT a ok
      RESULT b error RustyJson.EncodeError: output of 720000000000 bytes over the limit
      RESULT c error RustyJson.EncodeError: too deep
      RESULT d unexpected :what
      RESULT e error ArgumentError: bad
      """

      expected = %{
        "a" => :error,
        "b" => :bytes_error,
        "c" => :bytes_error,
        "d" => :clean,
        "e" => :ok
      }

      assert problems(output, 0, expected) == [
               "a: ok, expected an error",
               "c: error RustyJson.EncodeError: too deep (expected a size in bytes)",
               "d: unexpected :what",
               "e: error ArgumentError: bad (expected ok)"
             ]
    end
  end

  test "the ceiling on decoded terms is learned from the address-space limit" do
    {output, 0} =
      ChildVM.run_limited(
        ~s|%{max_term_bytes: max, memory: {memory, source}} = RustyJson.Native.info(); | <>
          ~s|IO.puts("CEILING \#{max} \#{memory} \#{source}")|,
        120
      )

    [max, memory, source] =
      Regex.run(~r/CEILING (\d+) (\d+) (\w+)/, output, capture: :all_but_first)

    assert String.to_integer(memory) <= 4_000_000 * 1024
    assert String.to_integer(max) == div(String.to_integer(memory), 16)
    assert source in ["address_space", "cgroup", "physical"]
  end

  # mimalloc's first arena would reserve 1 GiB of address space, a quarter of the limit here, before the NIF
  # holds anything (under it OTP 27 once had 600 MB left for the VM's own binaries): under a limit the NIF's
  # arenas are a 64th of it.
  test "loading the NIF and a first decode reserve little address space" do
    code = ~S"""
    vm_size = fn ->
      [kb] = Regex.run(~r/VmSize:\s+(\d+) kB/, File.read!("/proc/self/status"), capture: :all_but_first)
      String.to_integer(kb)
    end

    before = vm_size.()
    {:ok, _} = RustyJson.decode(~s({"a":[1,2.5,"x"]}))
    {:ok, _} = RustyJson.encode(%{"a" => [1, 2.5, "x"]})
    IO.puts("GREW #{vm_size.() - before}")
    """

    {output, 0} = ChildVM.run_limited(code, 120)
    [grew_kb] = Regex.run(~r/GREW (-?\d+)/, output, capture: :all_but_first)
    assert String.to_integer(grew_kb) < 256 * 1024, output
  end

  describe "the issue's cases" do
    for {label, expectation, timeout_s, code} <- Cases.named() do
      test label do
        run_cases!([{unquote(label), unquote(expectation), unquote(code)}], unquote(timeout_s))
      end
    end
  end

  describe "generated" do
    for batch <- Cases.generated() do
      test Enum.map_join(batch, ", ", &elem(&1, 0)) do
        run_cases!(unquote(Macro.escape(batch)), 600)
      end
    end
  end

  # Runs the cases in one child VM and fails with every problem and the end of the child's output.
  defp run_cases!(cases, timeout_s) do
    {output, status} =
      child(Enum.map(cases, fn {label, _, code} -> {label, code} end), "", timeout_s)

    expected = Map.new(cases, fn {label, expectation, _} -> {label, expectation} end)
    problems = problems(output, status, expected)

    assert problems == [],
           Enum.join(problems, "\n") <> "\n--- end of the child's output:\n" <> tail(output)
  end

  defp child(cases, after_cases \\ "", timeout_s \\ 120) do
    calls =
      Enum.map_join(cases, "\n", fn {label, code} ->
        "Case.run(#{inspect(label)}, fn ->\n#{code}\nend)"
      end)

    ChildVM.run_limited(@prelude <> calls <> "\n" <> after_cases, timeout_s)
  end

  # What is wrong with a child's run, [] when nothing: its exit status, a forbidden line, each case's outcome.
  defp problems(output, status, expected) do
    results =
      Map.new(
        Regex.scan(~r/^RESULT (\S+) (.*)$/m, output, capture: :all_but_first),
        &List.to_tuple/1
      )

    exit = if status == 0, do: [], else: ["exit status #{status}#{signal(status)}"]
    forbidden = for text <- @forbidden, output =~ text, do: "output has #{inspect(text)}"

    outcomes =
      expected
      |> Enum.sort()
      |> Enum.flat_map(fn {label, expectation} ->
        List.wrap(outcome_problem(results[label], expectation, label))
      end)

    exit ++ forbidden ++ outcomes
  end

  defp outcome_problem(nil, _expectation, label), do: "#{label}: no RESULT line"
  defp outcome_problem("ok", expectation, _label) when expectation in [:ok, :clean], do: nil
  defp outcome_problem("ok", _expectation, label), do: "#{label}: ok, expected an error"
  defp outcome_problem("error " <> m, :ok, label), do: "#{label}: error #{m} (expected ok)"

  defp outcome_problem("error " <> m, :bytes_error, label) do
    unless m =~ ~r/\d+ bytes/, do: "#{label}: error #{m} (expected a size in bytes)"
  end

  defp outcome_problem("error " <> _, _expectation, _label), do: nil
  defp outcome_problem(other, _expectation, label), do: "#{label}: #{other}"

  # The statuses a killed child leaves: `timeout`'s own, and 128 + the signal as the shell reports it.
  defp signal(124), do: " (timed out)"
  defp signal(134), do: " (SIGABRT)"
  defp signal(137), do: " (SIGKILL)"
  defp signal(139), do: " (SIGSEGV)"
  defp signal(_status), do: ""

  defp tail(output) when byte_size(output) > 4000,
    do: binary_part(output, byte_size(output) - 4000, 4000)

  defp tail(output), do: output
end
