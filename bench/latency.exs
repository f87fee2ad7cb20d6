# Scheduler latency: how late do processes that sleep 1 ms wake while other processes encode and decode a
# ~10 MB document? One sleeper per scheduler (bound to it, so work stealing cannot hide a blocked scheduler)
# loops on `receive after 1`, recording how much later than 1 ms it woke; two workers encode (the term) and
# decode (the text) the generated report document in a loop. An idle phase (no workers) first gives the
# machine's own median lateness, which is subtracted from every sample. Then the phases alternate RustyJson,
# jiffy, RustyJson, jiffy, ... so drift in the machine's load hits both alike. Prints a Markdown table of
# p50/p99/p99.9/max extra lateness per library.
#
#   mix run bench/latency.exs                 # make latency (runs it with default VM flags and with +sbwt none)
#   options: --phases N (per library, default 3), --seconds S (per phase, default 4), --mb MB (default 10),
#            --ops both|encode|decode (what the workers do, default both; controls: dirty_wait, two processes
#            asleep on dirty schedulers, and dirty_scan, two processes scanning a 100 MB string there, the
#            same in both phases), --monitor (print the VM's long_schedule/long_gc reports over 5 ms per
#            phase), --out PATH (also write the table)
Code.require_file("../test/support/apt_libs.exs", __DIR__)
Code.require_file("inputs.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy])

defmodule RustyJson.Bench.Latency do
  @moduledoc false
  alias RustyJson.Bench.Inputs

  def main(argv) do
    {opts, _} =
      OptionParser.parse!(argv,
        strict: [
          phases: :integer,
          seconds: :integer,
          mb: :integer,
          ops: :string,
          out: :string,
          monitor: :boolean
        ]
      )

    phases = opts[:phases] || 3
    ms = (opts[:seconds] || 4) * 1000
    mb = opts[:mb] || 10
    ops = String.to_atom(opts[:ops] || "both")

    {_name, json, term} = Inputs.from_term("report", Inputs.report(mb))

    # Kept as literals: a worker's garbage collections then never copy the document itself, only its results.
    :persistent_term.put({__MODULE__, :json}, json)
    :persistent_term.put({__MODULE__, :term}, term)

    if ops == :dirty_scan,
      do:
        :persistent_term.put({__MODULE__, :scan}, "\"" <> :binary.copy("a", 100_000_000) <> "\"")

    libs = [
      {"RustyJson", &RustyJson.encode!/1, &RustyJson.decode!/1},
      {"jiffy", &:jiffy.encode(&1, [:use_nil]), &:jiffy.decode(&1, [:return_maps, :use_nil])}
    ]

    sleepers = System.schedulers_online()

    IO.puts(
      "document #{Float.round(byte_size(json) / 1_000_000, 1)} MB; #{sleepers} sleepers; workers: #{ops}; " <>
        "#{phases} phases of #{div(ms, 1000)} s per library; VM flags: #{vm_flags()}"
    )

    if opts[:monitor], do: start_monitor()
    {idle, _} = phase(sleepers, ms, [])
    base = median(idle)

    IO.puts(
      "idle: median lateness #{us(base)}, p99 #{us(pct(Enum.sort(idle), 0.99))}; #{cpu_text()}"
    )

    samples =
      for round <- 1..phases, {label, enc, dec} <- libs, reduce: %{} do
        acc ->
          {late, calls} = phase(sleepers, ms, workers(ops, enc, dec))
          extra = Enum.map(late, &max(&1 - base, 0))
          s = Enum.sort(extra)

          IO.puts(
            "#{label} phase #{round}: #{calls} calls, p50 #{us(pct(s, 0.5))}, p99 #{us(pct(s, 0.99))}, " <>
              "max #{us(List.last(s))}; #{cpu_text()}"
          )

          if opts[:monitor], do: flush_monitor()

          Map.update(acc, label, {extra, calls}, fn {e, c} -> {extra ++ e, c + calls} end)
      end

    table = table(libs, samples, base)
    IO.puts("\n" <> table)
    if opts[:out], do: File.write!(opts[:out], table <> "\n")
  end

  # --monitor: the VM's own report of every scheduling slot and garbage collection longer than 5 ms.
  defp start_monitor do
    parent = self()

    pid =
      spawn(fn ->
        :erlang.system_monitor(self(), long_gc: 5, long_schedule: 5)
        monitor_loop(parent)
      end)

    Process.register(pid, :latency_monitor)
  end

  defp monitor_loop(parent) do
    receive do
      {:monitor, pid, kind, info} ->
        name = Keyword.get(Process.info(pid, [:dictionary]) || [], :dictionary, [])[:role]
        send(parent, {:event, kind, name || inspect(pid), info})
        monitor_loop(parent)
    end
  end

  defp flush_monitor do
    receive do
      {:event, kind, who, info} ->
        IO.puts(
          "  #{kind} #{who}: #{inspect(Keyword.take(info, [:timeout, :in, :out, :heap_size, :mbuf_size]))}"
        )

        flush_monitor()
    after
      0 -> :ok
    end
  end

  defp workers(ops, enc, dec) do
    json = fn -> :persistent_term.get({__MODULE__, :json}) end
    term = fn -> :persistent_term.get({__MODULE__, :term}) end

    case ops do
      :both ->
        [fn -> enc.(term.()) end, fn -> dec.(json.()) end]

      :encode ->
        [fn -> enc.(term.()) end, fn -> enc.(term.()) end]

      :decode ->
        [fn -> dec.(json.()) end, fn -> dec.(json.()) end]

      # Controls: two processes that hold dirty CPU schedulers 50 ms at a time, asleep (dirty_wait) or scanning
      # a 100 MB string (dirty_scan: pure CPU, nothing allocated: the result is a sub-binary of the input).
      :dirty_wait ->
        List.duplicate(fn -> :erts_debug.dirty_cpu(:wait, 50) end, 2)

      :dirty_scan ->
        List.duplicate(fn -> RustyJson.decode!(:persistent_term.get({__MODULE__, :scan})) end, 2)
    end
  end

  # Runs the sleepers for `ms` with the given worker loops; returns the sleepers' lateness samples (µs) and how
  # many calls the workers completed.
  defp phase(sleepers, ms, work) do
    parent = self()
    cpu_before = thread_cpu()
    deadline = System.monotonic_time(:millisecond) + ms

    worker_pids =
      for fun <- work do
        spawn(fn ->
          Process.put(:role, :worker)
          work_loop(fun, deadline, 0, parent)
        end)
      end

    sleeper_pids =
      for i <- 1..sleepers do
        :erlang.spawn_opt(
          fn ->
            Process.put(:role, :sleeper)
            send(parent, {:late, self(), sleep_loop(deadline, [])})
          end,
          scheduler: i
        )
      end

    late = Enum.flat_map(sleeper_pids, fn pid -> receive do: ({:late, ^pid, l} -> l) end)
    calls = Enum.sum(for pid <- worker_pids, do: receive(do: ({:calls, ^pid, n} -> n)))
    cpu = Map.merge(thread_cpu(), cpu_before, fn _, after_, before -> after_ - before end)
    Process.put(:cpu, cpu)
    {late, calls}
  end

  # CPU time (ms) used by the VM's normal and dirty CPU scheduler threads, from /proc (Linux; empty elsewhere).
  defp thread_cpu do
    for dir <- Path.wildcard("/proc/self/task/*"),
        {:ok, name} <- [File.read(Path.join(dir, "comm"))],
        {:ok, stat} <- [File.read(Path.join(dir, "stat"))],
        kind = thread_kind(String.trim(name)),
        kind != nil,
        reduce: %{} do
      acc ->
        [_, rest] = String.split(stat, ") ", parts: 2)
        fields = String.split(rest)
        ticks = String.to_integer(Enum.at(fields, 11)) + String.to_integer(Enum.at(fields, 12))
        Map.update(acc, kind, ticks * 10, &(&1 + ticks * 10))
    end
  end

  defp thread_kind(name) do
    cond do
      String.ends_with?(name, "_scheduler") -> :normal
      String.contains?(name, "_dirty_cpu") -> :dirty_cpu
      true -> nil
    end
  end

  defp cpu_text do
    cpu = Process.get(:cpu, %{})

    "CPU: normal schedulers #{Map.get(cpu, :normal, 0)} ms, dirty CPU #{Map.get(cpu, :dirty_cpu, 0)} ms"
  end

  defp work_loop(fun, deadline, n, parent) do
    if System.monotonic_time(:millisecond) < deadline do
      fun.()
      work_loop(fun, deadline, n + 1, parent)
    else
      send(parent, {:calls, self(), n})
    end
  end

  defp sleep_loop(deadline, acc) do
    t0 = System.monotonic_time(:microsecond)

    if div(t0, 1000) >= deadline do
      acc
    else
      receive do
      after
        1 -> :ok
      end

      sleep_loop(deadline, [System.monotonic_time(:microsecond) - t0 - 1000 | acc])
    end
  end

  defp table(libs, samples, base) do
    rows =
      for {label, _, _} <- libs do
        {extra, calls} = samples[label]
        s = Enum.sort(extra)

        "| #{label} | #{us(pct(s, 0.5))} | #{us(pct(s, 0.99))} | #{us(pct(s, 0.999))} | #{us(List.last(s))} | " <>
          "#{length(s)} | #{calls} |"
      end

    Enum.join(
      [
        "Extra lateness of 1 ms sleeps beyond the idle median (#{us(base)}); VM flags: #{vm_flags()}:",
        "",
        "| library | p50 | p99 | p99.9 | max | wake-ups | worker calls |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |" | rows
      ],
      "\n"
    )
  end

  # The scheduler busy-wait thresholds (+sbwt, +sbwtdcpu) as given to this VM, for the record.
  defp vm_flags do
    flags = System.get_env("ELIXIR_ERL_OPTIONS", "") <> " " <> System.get_env("ERL_FLAGS", "")
    if String.trim(flags) == "", do: "defaults", else: String.trim(flags)
  end

  defp median(list), do: pct(Enum.sort(list), 0.5)
  defp pct([], _), do: 0
  defp pct(sorted, q), do: Enum.at(sorted, round(q * (length(sorted) - 1)))
  defp us(v) when v >= 1000, do: :erlang.float_to_binary(v / 1000, decimals: 1) <> " ms"
  defp us(v), do: "#{round(v)} µs"
end

RustyJson.Bench.Latency.main(System.argv())
