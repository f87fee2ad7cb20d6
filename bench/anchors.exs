# Anchors: RustyJson against simdjsone 0.4.3 (a C++ NIF over simdjson, the nearest anchor of issue #57) and the
# ETF floor (`:erlang.term_to_binary/1` / `:erlang.binary_to_term/1` of the same term), decode and encode.
#
#   RUSTYJSON_SIMDJSONE=/path/to/simdjsone[:/path/to/another] mix run bench/anchors.exs [--cases c1,c2]
#     [--rounds R] [--n N] [--cpu C]
#
# RUSTYJSON_SIMDJSONE is simdjsone's folder, built out of band (nothing of it is in this tree, nor fetched by it):
# its ebin/ (simdjson.beam, simdjsone.app) and priv/simdjsone.so; several builds (as its Makefile builds it, and
# with -march=native) separated by colons. bench/notes/23-anchors.md says how to build them.
#
# Each round runs a VM for each side one after the other (`mix run --no-compile` in this checkout): RustyJson,
# each simdjsone build and the ETF floor; the order turns each round, so no side always goes first. Every VM
# makes the same inputs from fixed seeds (checked: each prints a digest of every input's bytes and term, which
# must agree) and times each case as the best of N calls, in a fresh process after one warm-up call (as
# bench/ab.exs does). The VMs are pinned to one core (`taskset -c C`, default 1) when taskset exists and the
# machine has more than C cores.
#
# The table shows, per document and direction, the best over the rounds of each side, each simdjsone build's
# time / RustyJson's of those bests (issue #57 wants 2.0 or more) with, in brackets, the range of that ratio over
# the rounds (each round's pair timed one after the other), and RustyJson / ETF.
#
# Cases (default: all): canada, twitter, citm_catalog (../shared/data/bench or $RUSTYJSON_BENCH_DATA, skipped
# when absent); floats_full_precision, floats_short_decimals, floats_integral, floats_exponents, liveview_diff
# (bench/inputs.exs content_kinds/0); geo (60,000 [lon, lat, alt] triples at full precision, seed 57) and
# sparse_keys (2,000 objects of 20 distinct random keys each, seed 57); wide_keys (500 objects of 100 distinct
# random keys, integer values) and wider_keys (20 objects of 3,000), hash maps on the VM (over 32 keys).
#
# simdjsone is called as a user would get RustyJson's terms from it: `:simdjson.decode(json, [:use_nil])` (nil
# for null; objects are maps by default) and `:simdjson.encode(term, [:use_nil])`, whose result is iodata (a
# list of binaries on large documents: it yields between slices), timed as returned. Its VM checks that its
# decode equals `RustyJson.decode!/1` and that its encode decodes back to the same term; a difference is printed.

Code.require_file("workers.exs", __DIR__)

defmodule RustyJson.Bench.Anchors do
  @moduledoc false
  alias RustyJson.Bench.Workers
  # The driver runs without the libraries; the workers call them in their own VMs.
  @compile {:no_warn_undefined, [RustyJson, :simdjson, :jiffy]}

  @shared ~w(canada twitter citm_catalog)
  @kinds ~w(floats_full_precision floats_short_decimals floats_integral floats_exponents liveview_diff)
  @default_cases @shared ++ @kinds ++ ~w(geo sparse_keys wide_keys wider_keys)

  @doc false
  def main(["--worker", side, cases, n]),
    do: worker(side, String.split(cases, ","), String.to_integer(n))

  def main(argv) do
    {opts, _, _} =
      OptionParser.parse(argv,
        strict: [cases: :string, rounds: :integer, n: :integer, cpu: :integer]
      )

    builds = simdjsone_dirs!()
    sides = ["rustyjson"] ++ Enum.map(builds, &("simdjsone=" <> &1)) ++ ["etf"]
    cases = String.split(opts[:cases] || Enum.join(@default_cases, ","), ",")
    rounds = opts[:rounds] || 5
    n = opts[:n] || 20
    pin = Workers.pin(opts[:cpu] || 1)

    IO.puts(:stderr, "#{rounds} rounds, best of #{n}, pinned: #{inspect(pin)}")

    results =
      for round <- 1..rounds, side <- order(sides, round) do
        IO.puts(:stderr, "round #{round}: #{side}")

        # This file in worker mode in a VM of this checkout; its lines `label<TAB>µs`, `#digest name<TAB>hash`,
        # `#bytes name<TAB>size` and `#check name<TAB>result`.
        args = ["--worker", side, Enum.join(cases, ","), "#{n}"]
        {round, side, Workers.run(side, Path.dirname(__DIR__), pin, __ENV__.file, args)}
      end

    check(results)
    report(results, builds, cases, rounds, n)
  end

  defp simdjsone_dirs! do
    dirs =
      System.get_env("RUSTYJSON_SIMDJSONE") ||
        raise "set RUSTYJSON_SIMDJSONE to simdjsone's folder"

    for dir <- String.split(dirs, ":", trim: true) do
      unless File.exists?(Path.join([dir, "ebin", "simdjson.beam"])) and
               File.exists?(Path.join([dir, "priv", "simdjsone.so"])) do
        raise "#{dir} has no ebin/simdjson.beam and priv/simdjsone.so (bench/notes/23-anchors.md)"
      end

      Path.expand(dir)
    end
  end

  # The sides turned by one place each round, and reversed every other round.
  defp order(sides, round) do
    k = rem(round - 1, length(sides))
    turned = Enum.drop(sides, k) ++ Enum.take(sides, k)
    if rem(round, 2) == 0, do: Enum.reverse(turned), else: turned
  end

  # Every VM must have made the same inputs; simdjsone's answers are reported where they differ.
  defp check(results) do
    digests =
      for {_, _, lines} <- results, {"#digest " <> _ = label, hash} <- lines, uniq: true do
        {label, hash}
      end

    for {label, hashes} <- Enum.group_by(digests, &elem(&1, 0), &elem(&1, 1)),
        length(hashes) > 1 do
      IO.puts("WARNING: the VMs made different inputs (#{label}): #{Enum.join(hashes, ", ")}")
    end

    for {_, "simdjsone=" <> dir, lines} <- results,
        {"#check " <> name, result} <- lines,
        result != "same",
        uniq: true do
      IO.puts("simdjsone #{dir} #{name}: #{result}")
    end
  end

  defp report(results, builds, cases, rounds, n) do
    us = fn side, label, round ->
      Enum.find_value(results, fn {r, s, lines} ->
        if r == round and s == side, do: number(lines[label])
      end)
    end

    best = fn side, label ->
      Enum.min(for(r <- 1..rounds, t = us.(side, label, r), do: t), fn -> nil end)
    end

    bytes =
      for {_, _, lines} <- results, {"#bytes " <> name, b} <- lines, into: %{}, do: {name, b}

    IO.puts("\nBest of #{n} calls per round, best over #{rounds} rounds (µs). simdjsone builds:")

    for {dir, i} <- Enum.with_index(builds, 1) do
      kernel =
        case File.read(Path.join([dir, "priv", "ondemand-kernel"])) do
          {:ok, text} -> ", on-demand kernel #{String.trim(text)}"
          _ -> ""
        end

      IO.puts("  S#{i}: #{dir}#{kernel}")
    end

    heads = Enum.map_join(1..length(builds), fn i -> " S#{i} µs | S#{i} / RustyJson |" end)

    IO.puts(
      "\n| document | bytes | direction | RustyJson µs |#{heads} ETF µs | RustyJson / ETF |"
    )

    aligns = String.duplicate(" ---: | ---: |", length(builds))
    IO.puts("| --- | ---: | --- | ---: |#{aligns} ---: | ---: |")

    for name <- cases, dir <- ~w(decode encode) do
      label = "#{name} #{dir}"
      {r, e} = {best.("rustyjson", label), best.("etf", label)}

      cells =
        Enum.map_join(builds, fn build ->
          side = "simdjsone=" <> build
          s = best.(side, label)

          paired =
            for round <- 1..rounds,
                a = us.("rustyjson", label, round),
                b = us.(side, label, round),
                do: b / a

          range =
            if paired == [],
              do: "",
              else: " (#{fmt(Enum.min(paired))}-#{fmt(Enum.max(paired))})"

          " #{s || "-"} | #{ratio(s, r)}#{range} |"
        end)

      IO.puts(
        "| #{name} | #{bytes[name] || "-"} | #{dir} | #{r || "-"} |#{cells} #{e || "-"} " <>
          "| #{ratio(r, e)} |"
      )
    end
  end

  defp ratio(a, b) when is_integer(a) and is_integer(b) and b > 0, do: fmt(a / b)
  defp ratio(_, _), do: "-"

  defp fmt(x), do: :erlang.float_to_binary(x, decimals: 2)

  defp number(nil), do: nil

  defp number(text) do
    case Integer.parse(text) do
      {us, ""} -> us
      _ -> nil
    end
  end

  # --- In each side's VM ---

  defp worker(side, cases, n) do
    Code.require_file("../test/support/apt_libs.exs", __DIR__)
    Code.require_file("inputs.exs", __DIR__)
    apply(RustyJson.AptLibs, :add_paths!, [[:jiffy]])
    simdjsone? = match?("simdjsone=" <> _, side)
    if simdjsone?, do: load_simdjsone!(String.replace_prefix(side, "simdjsone=", ""))
    inputs = inputs(cases)

    for name <- cases do
      case Map.fetch(inputs, name) do
        {:ok, json} ->
          # The term every side encodes (and the ETF side decodes from): RustyJson's, the same in every VM.
          term = RustyJson.decode!(json)
          IO.puts("#digest #{name}\t#{:erlang.phash2({json, term})}")
          IO.puts("#bytes #{name}\t#{byte_size(json)}")
          if simdjsone?, do: IO.puts("#check #{name}\t#{check_simdjsone(json, term)}")

          for {dir, fun} <- timings(side, json, term) do
            IO.puts("#{name} #{dir}\t#{Workers.best_of(fun, n)}")
          end

        :error ->
          IO.puts("#{name} decode\tabsent")
      end
    end
  end

  defp load_simdjsone!(dir) do
    Code.prepend_path(Path.join(dir, "ebin"))
    {:module, :simdjson} = Code.ensure_loaded(:simdjson)
  end

  defp timings("rustyjson", json, term),
    do: [
      {"decode", fn -> RustyJson.decode!(json) end},
      {"encode", fn -> RustyJson.encode!(term) end}
    ]

  defp timings("simdjsone=" <> _, json, term) do
    [
      {"decode", fn -> :simdjson.decode(json, [:use_nil]) end},
      {"encode", fn -> :simdjson.encode(term, [:use_nil]) end}
    ]
  end

  defp timings("etf", _json, term) do
    etf = :erlang.term_to_binary(term)

    [
      {"decode", fn -> :erlang.binary_to_term(etf) end},
      {"encode", fn -> :erlang.term_to_binary(term) end}
    ]
  end

  defp check_simdjsone(json, term) do
    decoded = :simdjson.decode(json, [:use_nil])
    back = RustyJson.decode!(IO.iodata_to_binary(:simdjson.encode(term, [:use_nil])))

    cond do
      decoded != term -> "decode differs from RustyJson.decode!/1"
      back != term -> "encode does not decode back to the same term"
      true -> "same"
    end
  end

  # The JSON text of each case present, by name.
  defp inputs(cases) do
    inputs = RustyJson.Bench.Inputs

    shared =
      for name <- @shared,
          name in cases,
          path = Path.join(inputs.shared_dir(), name <> ".json"),
          File.exists?(path),
          do: {name, File.read!(path)}

    kinds =
      if Enum.any?(@kinds, &(&1 in cases)),
        do: for({name, json, _} <- inputs.content_kinds(), name in @kinds, do: {name, json}),
        else: []

    generated =
      for {name, make} <- [
            {"geo", &geo/0},
            {"sparse_keys", &sparse_keys/0},
            {"wide_keys", fn -> wide_keys(500, 100) end},
            {"wider_keys", fn -> wide_keys(20, 3_000) end}
          ],
          name in cases do
        {name, IO.iodata_to_binary(:jiffy.encode(make.(), [:use_nil]))}
      end

    Map.new(shared ++ kinds ++ generated)
  end

  # 60,000 coordinate triples at full precision, as a GeoJSON LineString.
  defp geo do
    :rand.seed(:exsss, {57, 5, 7})

    coordinates =
      for _ <- 1..60_000 do
        [:rand.uniform() * 360 - 180, :rand.uniform() * 180 - 90, :rand.uniform() * 4000]
      end

    %{"type" => "LineString", "coordinates" => coordinates}
  end

  # 2,000 objects, each of 20 keys of 6-14 random letters: nearly every key is seen once.
  defp sparse_keys do
    :rand.seed(:exsss, {57, 7, 5})
    letters = fn len -> for _ <- 1..len, into: "", do: <<Enum.random(?a..?z)>> end

    for i <- 1..2_000 do
      Map.new(1..20, fn j ->
        value = if rem(j, 2) == 0, do: i * j, else: letters.(8)
        {letters.(6 + :rand.uniform(9) - 1), value}
      end)
    end
  end

  # `objects` objects of `keys` distinct keys of 6-14 random letters each, integer values (seed 57).
  defp wide_keys(objects, keys) do
    :rand.seed(:exsss, {57, objects, keys})
    letters = fn len -> for _ <- 1..len, into: "", do: <<Enum.random(?a..?z)>> end

    for i <- 1..objects do
      Map.new(1..keys, fn j -> {letters.(6 + :rand.uniform(9) - 1), i * j} end)
    end
  end
end

RustyJson.Bench.Anchors.main(System.argv())
