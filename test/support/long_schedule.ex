defmodule RustyJson.Test.LongSchedule do
  @moduledoc false
  # Runs work in another process (the VM does not report the monitoring process itself) while the node-wide
  # system monitor watches for any process holding a normal scheduler `ms` or more in one go. Callers must not be
  # async: the system monitor is one per node.
  #
  # The monitor measures wall time, and this machine is a VM whose host can stop it for milliseconds at a time
  # (the same parse runs 1.6x slower for a while, then fast again): a run caught by such a stop reports a long
  # schedule no code caused. So a run that reports one is repeated, up to `attempts` runs in all (6 unless given), and the check
  # fails only if every run reports one. A call that does not yield reports one in every run.

  import ExUnit.Assertions

  @doc "Runs `fun` in a task under a `long_schedule` monitor; returns its result, failing if every run reports."
  def without_long_schedules(ms, fun, attempts \\ 6) do
    previous = :erlang.system_monitor(self(), [{:long_schedule, ms}])

    try do
      run(fun, attempts, [])
    after
      case previous do
        :undefined -> :erlang.system_monitor(:undefined)
        {pid, opts} -> :erlang.system_monitor(pid, opts)
      end
    end
  end

  defp run(_fun, 0, reports) do
    flunk("every run held a normal scheduler too long: #{inspect(Enum.reverse(reports))}")
  end

  defp run(fun, attempts, reports) do
    result = fun |> Task.async() |> Task.await(30_000)

    receive do
      {:monitor, _, :long_schedule, info} ->
        flush()
        run(fun, attempts - 1, [info | reports])
    after
      100 -> result
    end
  end

  defp flush do
    receive do
      {:monitor, _, :long_schedule, _} -> flush()
    after
      0 -> :ok
    end
  end
end
