# A/B: two builds of RustyJson timed on the same inputs, in alternating runs, best of N calls each.
#
#   elixir bench/ab.exs A B [--cases c1,c2,...] [--rounds R] [--n N] [--cpu C]
#
# A and B are each a checkout's folder (already compiled: `mix compile` there, or with a precompiled library
# copied into its priv/native) or a git revision of this repository (`HEAD~1`, a hash, a branch), which is
# exported with `git archive` to $TMPDIR/rusty_json_ab/<hash> and compiled there once (cargo builds the NIF: a
# few minutes the first time).
#
# Each round runs A then B (then B then A in the next round, so neither always goes first), each in a VM of its own
# started in its folder (`mix run --no-compile`): the inputs are made by this checkout's bench/inputs.exs, so both
# builds see the same bytes, and each case is the best of N calls, each call in a fresh process after one warm-up
# call. The table shows, per case, the best over the rounds of each build and B/A (below 1: B is faster).
# The VMs are pinned to one core (`taskset -c C`, default 1) when taskset exists and the machine has more than C
# cores: left to float, the VM's threads land differently from run to run (bench/notes/80-reproducibility.md).
#
# Cases (`--cases`, comma-separated; default: the public documents present and the app shapes):
#   twitter, citm_catalog, canada, github_events, ... a public document of ../shared/data/bench (or
#                                   $RUSTYJSON_BENCH_DATA): decode and encode
#   multilingual_text, event_records, id_keyed_object, order_records, small_object
#                                   the app shapes of bench/inputs.exs: decode and encode
#   text_with_escapes, ...          a content kind of bench/inputs.exs (`content_kinds/2`): decode and encode
#   small                           1,000 decodes and encodes of a small object
#   records                         encode of 50,000 records built from one literal (shared keys)
#   parts                           encode of 200,000 strings String.split returned (sub-binaries)
#   derived                         encode of 1,000 derived structs (bench/support, compiled in the dev env)
#
# Old revisions are timed as they are: a case that uses what an old build lacks fails in its VM, which is reported.

Code.require_file("workers.exs", __DIR__)

defmodule RustyJson.Bench.AB do
  @moduledoc false
  alias RustyJson.Bench.Workers
  # The driver runs without the application; the worker calls it in each build's VM.
  @compile {:no_warn_undefined, [RustyJson]}

  @default_cases ~w(twitter citm_catalog canada github_events multilingual_text event_records id_keyed_object
                    order_records small_object small)

  @doc false
  def main(["--worker", cases, n]), do: worker(String.split(cases, ","), String.to_integer(n))

  def main(argv) do
    {opts, builds, _} =
      OptionParser.parse(argv,
        strict: [cases: :string, rounds: :integer, n: :integer, cpu: :integer]
      )

    [a, b] =
      case builds do
        [_, _] -> Enum.map(builds, &build_dir/1)
        _ -> raise "usage: elixir bench/ab.exs A B [--cases c1,c2] [--rounds R] [--n N] [--cpu C]"
      end

    cases = String.split(opts[:cases] || Enum.join(@default_cases, ","), ",")
    rounds = opts[:rounds] || 3
    n = opts[:n] || 20
    pin = Workers.pin(opts[:cpu] || 1)

    results =
      for round <- 1..rounds, side <- if(rem(round, 2) == 1, do: [:a, :b], else: [:b, :a]) do
        dir = if side == :a, do: a, else: b
        IO.puts(:stderr, "round #{round}: #{side} #{dir}")
        # This file in worker mode in the build's VM; its lines `case<TAB>µs`.
        {side,
         Workers.run(dir, dir, pin, __ENV__.file, ["--worker", Enum.join(cases, ","), "#{n}"])}
      end

    report(a, b, results)
  end

  # A folder as given; anything else a git revision, exported and compiled once.
  defp build_dir(arg) do
    if File.dir?(arg), do: Path.expand(arg), else: export(arg)
  end

  defp export(rev) do
    {hash, 0} = System.cmd("git", ["rev-parse", "--short=12", rev], cd: __DIR__)
    dir = Path.join([System.tmp_dir!(), "rusty_json_ab", String.trim(hash)])

    unless File.exists?(Path.join(dir, "_build")) do
      File.mkdir_p!(dir)
      archive = Path.join(dir, "src.tar")
      # From the repository's top: run in bench/, git archive would export bench/ alone.
      {_, 0} =
        System.cmd("git", ["archive", "-o", archive, String.trim(hash)], cd: Path.dirname(__DIR__))

      {_, 0} = System.cmd("tar", ["-xf", archive, "-C", dir])
      File.rm!(archive)
      IO.puts(:stderr, "compiling #{rev} in #{dir}")
      {_, 0} = System.cmd("mix", ["compile"], cd: dir, into: IO.stream(:stderr, :line))
    end

    dir
  end

  defp report(a, b, results) do
    best = fn side ->
      results
      |> Enum.filter(&(elem(&1, 0) == side))
      |> Enum.flat_map(fn {_, times} -> Map.to_list(times) end)
      |> Enum.group_by(&elem(&1, 0), &elem(&1, 1))
      |> Map.new(fn {name, times} -> {name, Enum.min_by(times, &number/1)} end)
    end

    {ta, tb} = {best.(:a), best.(:b)}
    IO.puts("A: #{a}\nB: #{b}\n\n| case | A µs | B µs | B/A |\n| --- | ---: | ---: | ---: |")

    for name <- Enum.uniq(Map.keys(ta) ++ Map.keys(tb)) |> Enum.sort() do
      {x, y} = {ta[name], tb[name]}

      ratio =
        if number(x) > 0 and number(y) > 0, do: Float.round(number(y) / number(x), 3), else: "-"

      IO.puts("| #{name} | #{x || "-"} | #{y || "-"} | #{ratio} |")
    end
  end

  defp number(text) do
    case Integer.parse(to_string(text)) do
      {us, ""} -> us
      _ -> 0
    end
  end

  # --- In each build's VM ---

  defp worker(cases, n) do
    Code.require_file("../test/support/apt_libs.exs", __DIR__)
    Code.require_file("inputs.exs", __DIR__)
    apply(RustyJson.AptLibs, :add_paths!, [[:jiffy]])

    for name <- cases do
      case safely(fn -> timings(name) end) do
        {:ok, timings} ->
          for {label, fun} <- timings do
            {_, us} = safely(fn -> Workers.best_of(fun, n) end)
            IO.puts("#{label}\t#{us}")
          end

        {:error, message} ->
          IO.puts("#{name}\t#{message}")
      end
    end
  end

  # A case an old build cannot run (or an unknown one) is reported in its row, not the end of the run.
  defp safely(fun) do
    {:ok, fun.()}
  rescue
    e -> {:error, "failed: " <> String.replace(Exception.message(e), ~r/\s+/, " ")}
  end

  defp timings("small") do
    small = ~s({"id":123,"name":"user","tags":["a","b"],"active":true,"score":1.5})
    term = RustyJson.decode!(small)

    [
      {"small x1000 decode", fn -> for _ <- 1..1000, do: RustyJson.decode!(small) end},
      {"small x1000 encode", fn -> for _ <- 1..1000, do: RustyJson.encode!(term) end}
    ]
  end

  defp timings("records") do
    keys = ~w(id name email active role score inserted_at updated_at)

    records =
      for i <- 1..50_000, do: Map.new(keys, &{&1, if(&1 in ~w(id score), do: i, else: "v")})

    [{"records encode", fn -> RustyJson.encode!(records) end}]
  end

  defp timings("parts") do
    parts = String.split(Enum.map_join(1..200_000, ",", &"value #{&1} of the row"), ",")
    [{"parts encode", fn -> RustyJson.encode!(parts) end}]
  end

  defp timings("derived") do
    module = RustyJson.Bench.S5

    fields =
      if Code.ensure_loaded?(module), do: Map.keys(struct(module)) -- [:__struct__], else: []

    one = if fields != [], do: struct(module, Map.new(fields, &{&1, 1}))
    list = if one, do: for(i <- 1..1000, do: Map.put(one, hd(fields), i))

    [
      {"derived x1000 encode",
       fn -> RustyJson.encode!(list || raise("no RustyJson.Bench.S5")) end}
    ]
  end

  defp timings(name) do
    {_, json, _} = input(name)
    term = RustyJson.decode!(json)

    [
      {"#{name} decode", fn -> RustyJson.decode!(json) end},
      {"#{name} encode", fn -> RustyJson.encode!(term) end}
    ]
  end

  defp input(name) do
    inputs = RustyJson.Bench.Inputs
    path = Path.join(inputs.shared_dir(), name <> ".json")

    cond do
      File.exists?(path) -> {name, File.read!(path), nil}
      found = Enum.find(inputs.app_shapes(), &(elem(&1, 0) == name)) -> found
      found = Enum.find(inputs.content_kinds(), &(elem(&1, 0) == name)) -> found
      true -> raise "unknown case #{name}"
    end
  end
end

RustyJson.Bench.AB.main(System.argv())
