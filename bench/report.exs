# Runs the whole benchmark suite and writes BENCHMARKS.md (and the charts under bench/charts/) from the run.
#
#   mix run bench/report.exs            # full suite, timing run twice to show reproducibility (make bench)
#   mix run bench/report.exs --quick    # smaller inputs, one timing run (make bench-quick)
#   mix run bench/report.exs --notes-only  # no timing: keep the existing file's timed tables, rewrite the rest
#                                            (bench/vms/*.md, the notes' summaries, links to bench/notes/*.md)
#   mix run bench/report.exs --vm-section bench/vms/sid.md  # one timing run, this VM's tables only (make bench
#                                                             runs it in each matrix root: scripts/bench-matrix)
#   options: --out PATH (default BENCHMARKS.md), --runs N
# The full report includes every bench/vms/*.md section there is.
Code.require_file("../test/support/apt_libs.exs", __DIR__)

for file <- ~w(harness inputs suite measure chart report_tail),
    do: Code.require_file("#{file}.exs", __DIR__)

RustyJson.AptLibs.add_paths!([:jiffy])

defmodule RustyJson.Bench.Report do
  @moduledoc false
  alias RustyJson.Bench.{Chart, Harness, Measure, ReportTail, Suite}

  def main(argv) do
    {opts, _} =
      OptionParser.parse!(argv,
        strict: [
          quick: :boolean,
          out: :string,
          runs: :integer,
          notes_only: :boolean,
          vm_section: :string
        ]
      )

    cond do
      opts[:notes_only] -> notes_only(opts[:out] || "BENCHMARKS.md")
      opts[:vm_section] -> vm_section(opts[:vm_section], opts)
      true -> run(opts, argv)
    end
  end

  # This VM's encode and decode tables, every peer it has as a column and a ratio, from one timing run (the
  # full report on the host includes the section).
  defp vm_section(out, opts) do
    started = System.monotonic_time(:second)
    timing = [rounds: 15, max_rounds: 15, batch_ms: 20, long_batch_ms: 100]
    libs = Suite.libraries()

    [results] =
      for run <- 1..(opts[:runs] || 1), do: time_all(Suite.inputs(:full), libs, timing, run)

    elapsed = System.monotonic_time(:second) - started
    names = Enum.map(libs, &elem(&1, 0))
    info = RustyJson.Native.info()
    on = for {path, true} <- Enum.sort(info.fast_paths), do: path

    File.mkdir_p!(Path.dirname(out))

    File.write!(out, """
    ## Erlang/OTP #{System.otp_release()}, Elixir #{System.version()}

    `mix run bench/report.exs --vm-section #{out}` in the #{os()} root of the version matrix (`scripts/bench-matrix`,
    run by `make bench`), one timing run of 15 rounds, #{elapsed} s, #{Date.utc_today()}. Peers: #{Enum.join(tl(names), ", ")}.
    Fast paths on (`RustyJson.Native.info/0`): #{Enum.join(on, ", ")}.

    RustyJson's median per call, and its paired ratio to each peer and to the ETF floor.

    #{peer_table(results, names)}
    """)

    IO.puts("wrote #{out} in #{elapsed} s")
  end

  # One row per input: RustyJson's median and its paired ratios to each peer and to the ETF floor, encode then
  # decode (the host's tables give every library's own time).
  defp peer_table(results, names) do
    peers = tl(names) ++ ["ETF floor"]
    ratios = Enum.map_join(peers, " | ", &"/ #{&1}")

    header =
      "| input | size | encode | #{ratios} | decode | #{ratios} |\n" <>
        "| --- | ---: |" <> String.duplicate(" ---: |", 2 * (1 + length(peers)))

    rows =
      for r <- results do
        cells = fn op ->
          s = Map.fetch!(r, op)

          Harness.fmt_us(s["RustyJson"].median_us) <>
            " | " <> Enum.map_join(peers, " | ", &x(ratio(s, "RustyJson", &1)))
        end

        "| #{r.name} | #{Harness.fmt_bytes(r.size)} | #{cells.(:enc)} | #{cells.(:dec)} |"
      end

    Enum.join([header | rows], "\n")
  end

  # The notes change more often than the timings: rebuild what follows the timed tables alone.
  defp notes_only(out) do
    ReportTail.rebuild(out)
    IO.puts("rewrote #{out} after its timed tables")
  end

  defp run(opts, argv) do
    mode = if opts[:quick], do: :quick, else: :full
    runs = opts[:runs] || if(mode == :quick, do: 1, else: 2)
    out = opts[:out] || "BENCHMARKS.md"

    timing =
      if mode == :quick,
        do: [rounds: 7, max_rounds: 21, batch_ms: 10, long_batch_ms: 50],
        else: [rounds: 30, max_rounds: 30, batch_ms: 20, long_batch_ms: 100]

    started = System.monotonic_time(:second)
    inputs = Suite.inputs(mode)
    libs = Suite.libraries()

    IO.puts(
      "libraries: #{Enum.map_join(libs, ", ", &elem(&1, 0))}; #{length(inputs)} inputs; #{runs} timing run(s)"
    )

    results = for run <- 1..runs, do: time_all(inputs, libs, timing, run)
    all_cores = floor_on_all_cores(inputs, libs, timing)
    costs = costs_all(inputs, libs)
    elapsed = System.monotonic_time(:second) - started

    # The charts go beside the report (bench/charts/ for BENCHMARKS.md), so its relative links hold.
    charts = Path.join(Path.dirname(out), "bench/charts")
    File.mkdir_p!(charts)
    first = hd(results)

    File.write!(
      Path.join(charts, "encode_ratio.svg"),
      Chart.ratio_svg("Encode: RustyJson time / jiffy time", ratio_rows(first, :enc))
    )

    File.write!(
      Path.join(charts, "decode_ratio.svg"),
      Chart.ratio_svg("Decode: RustyJson time / jiffy time", ratio_rows(first, :dec))
    )

    timed = markdown(mode, argv, libs, results, all_cores, costs, elapsed)
    File.write!(out, ReportTail.assemble(timed, out))
    IO.puts("wrote #{out} and #{charts}/*.svg in #{elapsed} s")
  end

  # Every input's encode and decode are timed together, round by round across all of them (`compare_all`).
  defp time_all(inputs, libs, timing, run) do
    {_, floor_enc, floor_dec} = Suite.floor()

    cases =
      Enum.flat_map(inputs, fn {group, name, json, term} ->
        etf = :erlang.term_to_binary(term)
        enc = for {l, e, _} <- libs, do: {l, fn -> e.(term) end}
        dec = for {l, _, d} <- libs, do: {l, fn -> d.(json) end}

        dec =
          if group == "keys",
            do: dec ++ [{"RustyJson copy keys", fn -> RustyJson.decode!(json, keys: :copy) end}],
            else: dec

        [
          {{name, :enc}, enc ++ [{"ETF floor", fn -> floor_enc.(term) end}]},
          {{name, :dec}, dec ++ [{"ETF floor", fn -> floor_dec.(etf) end}]}
        ]
      end)

    IO.puts("run #{run}: #{length(cases)} cases")
    progress = fn round, active -> IO.puts("run #{run}: round #{round}, #{active} cases") end
    stats = Harness.compare_all(cases, [{:progress, progress} | timing])

    for {group, name, json, _term} <- inputs do
      enc = stats[{name, :enc}]
      dec = stats[{name, :dec}]

      IO.puts(
        "run #{run}: #{name}: encode #{Float.round(ratio(enc, "RustyJson", "jiffy"), 3)}, " <>
          "decode #{Float.round(ratio(dec, "RustyJson", "jiffy"), 3)} of jiffy"
      )

      %{group: group, name: name, size: byte_size(json), enc: enc, dec: dec}
    end
  end

  # The documents and the content kinds (the other groups' shapes add rows, not information).
  defp costs_all(inputs, libs) do
    for {group, name, json, term} <- inputs, group in ["public", "generated", "content"] do
      IO.write("memory and reductions: #{name}...")
      n = max(1, div(50_000, max(1, div(byte_size(json), 100))))

      per_lib =
        for {l, e, d} <- libs do
          {l,
           %{
             enc_mem: Measure.beam_memory(fn -> e.(term) end),
             dec_mem: Measure.beam_memory(fn -> d.(json) end),
             enc_red: Measure.reductions(fn -> e.(term) end, n),
             dec_red: Measure.reductions(fn -> d.(json) end, n)
           }}
        end

      etf = :erlang.term_to_binary(term)

      floor = %{
        enc_mem: Measure.beam_memory(fn -> :erlang.term_to_binary(term) end),
        dec_mem: Measure.beam_memory(fn -> :erlang.binary_to_term(etf) end)
      }

      native = %{
        enc: Measure.native_peak(fn -> RustyJson.encode!(term) end),
        dec: Measure.native_peak(fn -> RustyJson.decode!(json) end)
      }

      IO.puts(" done")
      %{name: name, libs: Map.new(per_lib), floor: floor, native: native}
    end
  end

  defp ratio_rows(results, op) do
    for r <- results, do: {r.name, ratio(Map.fetch!(r, op), "RustyJson", "jiffy")}
  end

  defp ratio(stats, a, b), do: Harness.ratio(stats, a, b)

  defp markdown(mode, argv, libs, [first | _] = results, all_cores, costs, elapsed) do
    lib_names = Enum.map(libs, &elem(&1, 0))

    """
    # Benchmarks

    Generated by `mix run bench/report.exs #{Enum.join(argv, " ")}` (`make bench#{if mode == :quick, do: "-quick", else: ""}`) on
    #{Date.utc_today()} in #{elapsed} s. Do not edit by hand: rerun the command.

    #{machine()}

    ## Method

    - Harness: `bench/harness.exs`, nothing from hex. A round samples every library (#{Enum.join(lib_names, ", ")}, the ETF
      floor) on every input's encode and decode in a shuffled order, so drift of this shared 2-vCPU VM hits all
      alike. A sample runs in a fresh process: one untimed call (growing the heap as any process that calls twice),
      then a batch of calls sized to last #{if mode == :quick, do: "10 ms (50 ms", else: "20 ms (100 ms"} when one takes 100 µs or more). Tables show the
      median per call over the rounds and RustyJson's p25-p75 spread.
    - Ratios (every "/" column and the charts) are paired: the median over rounds of the two libraries' samples'
      ratio in that round, taken one right after the other (slow stretches of the VM then slow both alike).
    - #{pinning()}
    - Rounds: #{if mode == :quick, do: "7, up to 21 while some library's p25-p75 spread is wider than 10% of its median", else: "30 for every input (about 7 minutes per timing run)"}.
    - Peers: jiffy (Debian's erlang-jiffy) always; Jason, OTP's `:json` (OTP 27+) and Elixir's `JSON` (1.18+) join
      when loadable (add `{:jason, "~> 1.4"}` to your deps for Jason's columns).
    - ETF floor: `:erlang.term_to_binary/1` and `:erlang.binary_to_term/1` of the same term: the cost of copying the
      data through the VM's own serialization. Terms to encode are what a decoder returns for the document (string
      keys, `nil` for null); jiffy encodes with `[:use_nil]` and decodes with `[:return_maps, :use_nil]`.
    - Memory: BEAM, the `:erlang.memory(:total)` delta across one call in a fresh process with the result kept
      (median of 5); native, the peak held by RustyJson's NIF allocator (`native/rustyjson_nif/src/alloc.rs`; jiffy's
      is not visible here). Reductions: per call, in a fresh process.
    - Content kinds (issue #50, `Inputs.content_kinds/2`, generated from a seed): text with a few escapes of every
      kind, one kind at a time, `\\uXXXX` with surrogate pairs, long strings dense with escapes, a LiveView-style diff;
      floats at full precision, with 3 decimals, integral, and with exponents.

    ![encode ratio](bench/charts/encode_ratio.svg)
    ![decode ratio](bench/charts/decode_ratio.svg)

    ## Encode

    #{time_table(first, :enc, lib_names)}

    ## Decode

    #{time_table(first, :dec, lib_names)}

    #{all_cores_section(first, all_cores)}

    ## The key cache (`keys: :intern`, and the default keys from 512 bytes)

    Decode of arrays of same-shaped objects (keys repeat) and of objects whose keys never repeat: `keys: :copy`
    (each key made where it occurs, no cache) against the default keys, which use the key cache of
    `keys: :intern` for inputs of 512 bytes or more (all of these); from the same run as the decode table.

    #{intern_table(first)}

    ## Memory and reductions

    The public and generated documents and the content kinds.

    #{cost_table(costs, lib_names)}

    ## Reproducibility

    #{repro_table(results)}
    """
  end

  # Which CPUs this VM may run on (`taskset`), from the kernel's view of this process.
  defp pinning do
    allowed = cpus_allowed()
    online = :erlang.system_info(:logical_processors_online)

    cond do
      allowed == nil ->
        "CPU affinity: unknown on this OS."

      online in [:unknown, 1] or not String.match?(allowed, ~r/^\d+$/) ->
        "CPU affinity: CPUs #{allowed} (not pinned to one core)."

      true ->
        "CPU affinity: the VM ran pinned to CPU #{allowed} of #{online} (`make bench` runs it under " <>
          "`taskset -c #{allowed}`), so every library pays for all of its work, dirty schedulers and collector " <>
          "included, on one core; left to float, those threads moved ratios by up to 40% between runs " <>
          "(bench/notes/80-reproducibility.md)."
    end
  end

  defp os do
    case File.read("/etc/os-release") do
      {:ok, text} ->
        Regex.run(~r/PRETTY_NAME="([^"]+)"/, text, capture: :all_but_first) |> List.first()

      _ ->
        "unknown"
    end
  end

  defp machine do
    cpu =
      case File.read("/proc/cpuinfo") do
        {:ok, text} -> text |> String.split("\n") |> Enum.find_value("unknown", &model_name/1)
        _ -> "unknown"
      end

    os = os()

    mem_gb =
      case File.read("/proc/meminfo") do
        {:ok, "MemTotal:" <> rest} ->
          div(rest |> String.trim() |> Integer.parse() |> elem(0), 1_000_000)

        _ ->
          "?"
      end

    rustc =
      case System.find_executable("rustc") || Path.expand("~/.cargo/bin/rustc") do
        nil ->
          "unknown"

        path ->
          if File.exists?(path),
            do: path |> System.cmd(["--version"]) |> elem(0) |> String.trim(),
            else: "unknown"
      end

    jiffy =
      Application.spec(:jiffy, :vsn) ||
        (Application.load(:jiffy) && Application.spec(:jiffy, :vsn))

    """
    Machine: #{cpu}, #{System.schedulers_online()} schedulers, #{mem_gb} GB; #{os}.
    Elixir #{System.version()}, Erlang/OTP #{System.otp_release()} (erts #{:erlang.system_info(:version)}),
    jiffy #{jiffy}, #{rustc}; NIF built with cargo's release profile (LTO, one codegen unit).\
    """
  end

  defp model_name("model name" <> rest),
    do: rest |> String.trim_leading() |> String.trim_leading(":") |> String.trim()

  defp model_name(_), do: nil

  defp time_table(results, op, lib_names) do
    header =
      ("| input | size | " <>
         Enum.map_join(lib_names, " | ", & &1) <>
         " | ETF floor | RustyJson / jiffy | RustyJson / floor | RustyJson p25-p75 |\n" <>
         "| --- | ---: | " <> String.duplicate("---: | ", length(lib_names) + 4))
      |> String.trim_trailing(" ")

    rows =
      for r <- results do
        s = Map.fetch!(r, op)
        rj = s["RustyJson"]

        "| #{r.name} | #{Harness.fmt_bytes(r.size)} | " <>
          Enum.map_join(lib_names, " | ", &Harness.fmt_us(s[&1].median_us)) <>
          " | #{Harness.fmt_us(s["ETF floor"].median_us)} | #{x(ratio(s, "RustyJson", "jiffy"))} | " <>
          "#{x(ratio(s, "RustyJson", "ETF floor"))} | #{Harness.fmt_us(rj.p25_us)} - #{Harness.fmt_us(rj.p75_us)} |"
      end

    Enum.join([header | rows], "\n")
  end

  defp intern_table(results) do
    rows =
      for r <- results, Map.has_key?(r.dec, "RustyJson copy keys") do
        c = r.dec["RustyJson copy keys"].median_us
        d = r.dec["RustyJson"].median_us

        "| #{r.name} | #{Harness.fmt_bytes(r.size)} | #{Harness.fmt_us(c)} | #{Harness.fmt_us(d)} | " <>
          "#{x(ratio(r.dec, "RustyJson", "RustyJson copy keys"))} | #{x(ratio(r.dec, "RustyJson", "jiffy"))} |"
      end

    Enum.join(
      [
        "| input | size | keys: :copy | default keys (cache) | default / copy | default / jiffy |",
        "| --- | ---: | ---: | ---: | ---: | ---: |" | rows
      ],
      "\n"
    )
  end

  defp cost_table(costs, lib_names) do
    header =
      "| input | " <>
        Enum.map_join(lib_names, " | ", &"#{&1} enc / dec BEAM mem") <>
        " | ETF floor enc / dec BEAM mem | RustyJson enc / dec native peak | " <>
        Enum.map_join(lib_names, " | ", &"#{&1} enc / dec reductions") <> " |"

    sep = "|" <> String.duplicate(" ---: |", 3 + 2 * length(lib_names))

    rows =
      for c <- costs do
        "| #{c.name} | " <>
          Enum.map_join(lib_names, " | ", fn l -> pair(c.libs[l].enc_mem, c.libs[l].dec_mem) end) <>
          " | #{pair(c.floor.enc_mem, c.floor.dec_mem)} | #{pair(c.native.enc, c.native.dec)} | " <>
          Enum.map_join(lib_names, " | ", fn l ->
            "#{c.libs[l].enc_red} / #{c.libs[l].dec_red}"
          end) <> " |"
      end

    Enum.join([header, String.replace(sep, "| ---: |", "| --- |", global: false) | rows], "\n")
  end

  defp pair(a, b), do: "#{bytes(a)} / #{bytes(b)}"
  defp bytes(nil), do: "n/a"
  defp bytes(b) when b < 0, do: "~0"
  defp bytes(b), do: Harness.fmt_bytes(b)

  defp repro_table([_]),
    do: "One timing run only (quick mode): run without `--quick` to compare two runs."

  defp repro_table([a, b | _]) do
    a
    |> Enum.zip(b)
    |> Enum.map(fn {ra, rb} ->
      ea = ratio(ra.enc, "RustyJson", "jiffy")
      eb = ratio(rb.enc, "RustyJson", "jiffy")
      da = ratio(ra.dec, "RustyJson", "jiffy")
      db = ratio(rb.dec, "RustyJson", "jiffy")
      {ra.name, Enum.map([ea, eb, da, db], &x/1), max(diff(ea, eb), diff(da, db))}
    end)
    |> ReportTail.reproducibility()
  end

  defp diff(a, b), do: abs(a - b) / min(a, b)

  # The documents' decode against `binary_to_term` once more, after the timing runs, with the VM's threads free
  # on every CPU (as a deployed VM runs). Pinned, a result of 128K words or more (about 1 MB) makes the caller's
  # next collection hop to a dirty scheduler that shares the one core with the caller's scheduler
  # (bench/notes/20-decode.md), so the pinned ratio is the dearer one. nil when the VM was not pinned.
  defp floor_on_all_cores(inputs, libs, timing) do
    online = :erlang.system_info(:logical_processors_online)
    # The same decode functions as the pinned table's.
    {_, _, rj_dec} = List.keyfind(libs, "RustyJson", 0)
    {_, _, floor_dec} = Suite.floor()

    with pinned when is_binary(pinned) <- cpus_allowed(),
         true <- String.match?(pinned, ~r/^\d+$/) and is_integer(online) and online > 1,
         :ok <- set_affinity("0-#{online - 1}") do
      try do
        cases =
          for {group, name, json, term} <- inputs, group in ["public", "generated"] do
            etf = :erlang.term_to_binary(term)

            {name,
             [
               {"RustyJson", fn -> rj_dec.(json) end},
               {"ETF floor", fn -> floor_dec.(etf) end}
             ]}
          end

        IO.puts(
          "decode against the ETF floor on CPUs 0-#{online - 1}: #{length(cases)} documents"
        )

        rounds = 15

        {online,
         Harness.compare_all(cases, Keyword.merge(timing, rounds: rounds, max_rounds: rounds))}
      after
        set_affinity(pinned)
      end
    else
      _ -> nil
    end
  end

  defp cpus_allowed do
    with {:ok, text} <- File.read("/proc/self/status"),
         [_, list] <- Regex.run(~r/Cpus_allowed_list:\s*(\S+)/, text),
         do: list,
         else: (_ -> nil)
  end

  # Every thread of this VM (`taskset -a`): the schedulers, dirty schedulers and the rest.
  defp set_affinity(cpus) do
    with exe when is_binary(exe) <- System.find_executable("taskset"),
         {_, 0} <-
           System.cmd(exe, ["-a", "-p", "-c", cpus, List.to_string(:os.getpid())],
             stderr_to_stdout: true
           ) do
      :ok
    else
      _ -> :error
    end
  end

  defp all_cores_section(_first, nil), do: ""

  defp all_cores_section(first, {online, stats}) do
    rows =
      for r <- first, s <- List.wrap(stats[r.name]) do
        "| #{r.name} | #{Harness.fmt_bytes(r.size)} | #{Harness.fmt_us(s["RustyJson"].median_us)} | " <>
          "#{Harness.fmt_us(s["ETF floor"].median_us)} | #{x(ratio(s, "RustyJson", "ETF floor"))} | " <>
          "#{x(ratio(r.dec, "RustyJson", "ETF floor"))} |"
      end

    """
    ## Decode against the ETF floor, VM on all #{online} CPUs

    The tables above ran with the VM pinned to one CPU. A decode whose result is 128K words or more (about 1 MB)
    leaves that much in heap fragments, and the VM runs the caller's next collection on a dirty scheduler; pinned,
    that hop shares the one CPU with the caller's own scheduler (`bench/notes/20-decode.md`). After the timing
    runs, the documents' decode and `binary_to_term` were timed again (15 rounds, same harness) with every thread
    of the VM free on all #{online} CPUs, as a deployed VM runs:

    | document | size | RustyJson | ETF floor | RustyJson / floor, all CPUs | RustyJson / floor, pinned (above) |
    | --- | ---: | ---: | ---: | ---: | ---: |
    #{Enum.join(rows, "\n")}
    """
  end

  defp x(r), do: :erlang.float_to_binary(r, decimals: 2)
end

RustyJson.Bench.Report.main(System.argv())
