# Scheduler holds of single pieces of work whose size the input controls (make latency runs this after
# latency.exs): output bytes written, string bytes unescaped, iodata pieces flattened, digits converted. For each
# class, at the size that once held a normal scheduler for tens of milliseconds to seconds, the longest time one
# call held a normal scheduler in one go (the VM's `long_schedule` reports, from 1 ms) and the call's time;
# jiffy beside it where it has the same operation. Prints a Markdown table. Inputs are built before the calls:
# building some holds a scheduler by itself (Integer.pow(10, 400_000): 0.4-0.6 s on OTP 25; String.duplicate/2 of
# 20 MB, :binary.copy/2: 110-200 ms on OTP 27, where it does not yield).
#
#   mix run bench/holds.exs                 # options: --runs N (calls per class, default 3), --out PATH
Code.require_file("../test/support/apt_libs.exs", __DIR__)
# jiffy where the VM's suite packages it (not in Debian sid).
RustyJson.AptLibs.add_paths_if_present([:jiffy])
Code.require_file("timed_calls.exs", __DIR__)

defmodule RustyJson.Bench.Holds do
  @moduledoc false
  alias RustyJson.Bench.TimedCalls

  def main(argv) do
    {opts, _} = OptionParser.parse!(argv, strict: [runs: :integer, out: :string])
    runs = opts[:runs] || 3

    rows =
      for {name, build} <- classes() do
        {ours, jiffy} = build.()

        row = %{
          name: name,
          ours: TimedCalls.run(ours, runs),
          jiffy: jiffy && TimedCalls.run(jiffy, runs)
        }

        IO.puts(:stderr, "#{name}: #{cell(row.ours)}")
        row
      end

    table =
      Enum.join(
        [
          "| input | RustyJson: longest hold / time | jiffy: longest hold / time |",
          "| --- | ---: | ---: |"
          | Enum.map(rows, &"| #{&1.name} | #{cell(&1.ours)} | #{cell(&1.jiffy)} |")
        ],
        "\n"
      ) <>
        "\n\nThe longest `long_schedule` the VM reported over #{runs} calls per input (each in a fresh " <>
        "process; under 1 ms is not reported), and the fastest call's time. Inputs are built before the calls."

    IO.puts(table)
    if opts[:out], do: File.write!(opts[:out], table <> "\n")
  end

  defp classes do
    escaped = String.duplicate("ab\\ncd\\u00e9", 4_166_666)
    string = "\"" <> escaped <> "\""

    [
      {"`Formatter.pretty_print/1` of 20,000 nested `[` (40 KB in, 800 MB out)",
       fn ->
         input = String.duplicate("[", 20_000) <> String.duplicate("]", 20_000)
         {fn -> RustyJson.Formatter.pretty_print(input) end, nil}
       end},
      {"`decode` of a 50 MB string, escape-dense",
       fn -> {fn -> RustyJson.decode!(string) end, jiffy(fn -> :jiffy.decode(string) end)} end},
      {"`decode` of an object whose key is that string",
       fn ->
         object = "{" <> string <> ":1}"

         {fn -> RustyJson.decode!(object) end,
          jiffy(fn -> :jiffy.decode(object, [:return_maps]) end)}
       end},
      {"`Stream.decode_documents` of a 36 MB string in 64 KiB chunks",
       fn ->
         document = "\"" <> binary_part(escaped, 0, 36_000_000) <> "\"\n"
         chunks = for <<chunk::binary-size(65_536) <- document>>, do: chunk
         rest = binary_part(document, length(chunks) * 65_536, rem(byte_size(document), 65_536))

         {fn -> (chunks ++ [rest]) |> RustyJson.Stream.decode_documents() |> Enum.to_list() end,
          nil}
       end},
      {"`encode([[1]], pretty: [indent: 50 MB])`",
       fn ->
         indent = String.duplicate(" ", 50_000_000)
         {fn -> RustyJson.encode!([[1]], pretty: [indent: indent]) end, nil}
       end},
      {"`encode([[1]], pretty: [indent: 20 MB])`",
       fn ->
         indent = String.duplicate(" ", 20_000_000)
         {fn -> RustyJson.encode!([[1]], pretty: [indent: indent]) end, nil}
       end},
      {"`encode` of a `Fragment.new/1` of a 5M-piece iolist",
       fn ->
         fragment = RustyJson.Fragment.new(List.duplicate("1", 5_000_000))
         {fn -> RustyJson.encode!(%{a: fragment}) end, nil}
       end},
      {"`encode(%{bignum of 400,000 digits => 1, 2 => 3}, sort_keys: true)`",
       fn ->
         map = %{:binary.decode_unsigned(:binary.copy(<<0x5A>>, 166_000)) => 1, 2 => 3}
         {fn -> RustyJson.encode!(map, sort_keys: true) end, nil}
       end},
      {"`encode(%{bignum of 1M digits => 1, 2 => 3}, sort_keys: true)`",
       fn ->
         map = %{:binary.decode_unsigned(:binary.copy(<<0x5A>>, 415_000)) => 1, 2 => 3}
         {fn -> RustyJson.encode!(map, sort_keys: true) end, nil}
       end},
      {"`get` of a 52 MB array walked again after the skim's doubt at its end (64 levels)",
       fn ->
         items = String.duplicate(~s([1,{"x":[]}],), 4_000_000)
         deep = String.duplicate("[", 64) <> String.duplicate("]", 64)
         json = ~s({"a":1,"b":[) <> items <> deep <> "]}"
         {fn -> {:ok, 1} = RustyJson.get(json, "/a") end, nil}
       end},
      {"`decode` of a 1M-digit integer, digit limit raised",
       fn ->
         digits = String.duplicate("7", 1_000_000)

         {fn -> RustyJson.decode!(digits, decoding_integer_digit_limit: 1_000_000) end,
          jiffy(fn -> :jiffy.decode(digits) end)}
       end},
      {"`decode` of a 1M-deep document (2 MB)",
       fn ->
         deep = deep()
         {fn -> RustyJson.decode!(deep) end, nil}
       end},
      {"`get(deep, \"/0\")` of that document",
       fn ->
         deep = deep()
         {fn -> RustyJson.get(deep, "/0") end, nil}
       end},
      {"`Stream.decode_documents` of that document",
       fn ->
         deep = deep()
         {fn -> [deep] |> RustyJson.Stream.decode_documents() |> Enum.to_list() end, nil}
       end}
    ]
  end

  # A million nested arrays: the parser's and the locator's frame stacks grow to a million frames (on a VM's first
  # call, into pages never touched before).
  defp deep, do: String.duplicate("[", 1_000_000) <> String.duplicate("]", 1_000_000)

  defp jiffy(call), do: if(Code.ensure_loaded?(:jiffy), do: call)

  defp cell(nil), do: "-"
  defp cell(%{hold_ms: 0, us: us}), do: "< 1 ms / #{time(us)}"
  defp cell(%{hold_ms: ms, us: us}), do: "#{ms} ms / #{time(us)}"

  defp time(us) when us >= 1_000_000,
    do: :erlang.float_to_binary(us / 1_000_000, decimals: 2) <> " s"

  defp time(us), do: :erlang.float_to_binary(us / 1000, decimals: 1) <> " ms"
end

RustyJson.Bench.Holds.main(System.argv())
