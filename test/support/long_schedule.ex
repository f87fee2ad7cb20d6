defmodule RustyJson.Test.LongSchedule do
  @moduledoc false
  # Runs work in another process (the VM does not report the monitoring process itself) while the node-wide
  # system monitor watches for any process holding a normal scheduler `ms` or more in one go. Callers must not be
  # async: the system monitor is one per node.
  #
  # The monitor measures wall time, which two things stretch without any code holding a scheduler:
  #
  #   * a busy machine: the OS takes the CPU from a scheduler thread mid-slice (with two test suites and a cargo
  #     build on 2 cores, slices of 1 ms were reported as holds of 21-43 ms). Linux counts the time each thread
  #     waited for a CPU (/proc/self/task/*/schedstat); a report counts only for what is left of it after the
  #     longest such wait of a normal scheduler thread during the run. A call that does not yield holds far longer
  #     than it waits, unless the machine is so busy that no hold can be told from a wait.
  #   * this machine is a VM whose host can stop it for milliseconds at a time (the same parse runs 1.6x slower for
  #     a while, then fast again), which the guest's counts do not show: a run whose reports still count is
  #     repeated, up to `attempts` runs in all (6 unless given), and the check fails only if every run reports.

  import ExUnit.Assertions

  @doc "Runs `fun` in a task under a `long_schedule` monitor; returns its result, failing if every run reports."
  @spec without_long_schedules(pos_integer(), (() -> result), pos_integer()) :: result
        when result: term()
  def without_long_schedules(ms, fun, attempts \\ 6) do
    previous = :erlang.system_monitor(self(), [{:long_schedule, ms}])

    try do
      run(ms, fun, attempts, [])
    after
      case previous do
        :undefined -> :erlang.system_monitor(:undefined)
        {pid, opts} -> :erlang.system_monitor(pid, opts)
      end
    end
  end

  defp run(_ms, _fun, 0, reports) do
    flunk("every run held a normal scheduler too long: #{inspect(Enum.reverse(reports))}")
  end

  defp run(ms, fun, attempts, reports) do
    before = waits()
    # No wait of its own: the test's timeout bounds the run, which a busy machine slows.
    result = fun |> Task.async() |> Task.await(:infinity)
    held = collect(100)
    waited = longest_wait(before, waits())

    case Enum.filter(held, &(&1[:timeout] - waited >= ms)) do
      [] ->
        result

      counted ->
        run(ms, fun, attempts - 1, [[waited_for_cpu_ms: waited, reports: counted] | reports])
    end
  end

  # The monitor's reports for the run: the first may come up to `wait_ms` after it, the rest at once.
  defp collect(wait_ms) do
    receive do
      {:monitor, _, :long_schedule, info} -> [info | collect(0)]
    after
      wait_ms -> []
    end
  end

  # Nanoseconds each normal scheduler thread has waited for a CPU so far (by thread id); none where Linux's
  # per-thread counts are missing (not Linux), which counts no wait. Where they exist, finding no scheduler thread
  # is an error, not "no wait": the threads were renamed (`1_scheduler` on OTP 25, `erts_sched_1` on 27 and 29), and the check,
  # blind there, reported a busy machine's stretched slices as holds with `waited_for_cpu_ms: 0` (#55).
  defp waits do
    case File.ls("/proc/self/task") do
      {:ok, tids} ->
        waits = for tid <- tids, wait <- scheduler_wait(tid), into: %{}, do: {tid, wait}
        if waits == %{}, do: flunk("no normal scheduler thread in /proc/self/task: renamed?")
        waits

      {:error, _} ->
        %{}
    end
  end

  # Normal scheduler threads: `N_scheduler` (OTP 25), `erts_sched_N` (OTP 27, 29); dirty ones are `N_dirty_*`
  # and `erts_dcpus_N`/`erts_dios_N` (their long calls are no `long_schedule`). (A regex inline: one in a module
  # attribute cannot be escaped from OTP 28 on.)
  defp scheduler_wait(tid) do
    with {:ok, name} <- File.read("/proc/self/task/#{tid}/comm"),
         true <- String.match?(String.trim_trailing(name), ~r/^(\d+_scheduler|erts_sched_\d+)$/),
         {:ok, stat} <- File.read("/proc/self/task/#{tid}/schedstat"),
         [_run, wait | _] <- String.split(stat) do
      [String.to_integer(wait)]
    else
      _ -> []
    end
  end

  # The longest wait of any one normal scheduler thread between two readings, in whole milliseconds.
  defp longest_wait(before, later) do
    later
    |> Enum.map(fn {tid, wait} -> wait - Map.get(before, tid, wait) end)
    |> Enum.max(fn -> 0 end)
    |> div(1_000_000)
  end
end
