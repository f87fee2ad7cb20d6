defmodule RustyJson.Test.LongSchedule do
  @moduledoc false
  # Runs work in another process (the VM does not report the monitoring process itself) while the node-wide
  # system monitor watches for any process holding a normal scheduler `ms` or more in one go. Callers must not be
  # async: the system monitor is one per node.

  import ExUnit.Assertions

  @doc "Runs `fun` in a task under a `long_schedule` monitor; returns its result, failing on any report."
  def without_long_schedules(ms, fun) do
    previous = :erlang.system_monitor(self(), [{:long_schedule, ms}])

    try do
      result = fun |> Task.async() |> Task.await(30_000)
      refute_receive {:monitor, _, :long_schedule, _}, 100
      result
    after
      case previous do
        :undefined -> :erlang.system_monitor(:undefined)
        {pid, opts} -> :erlang.system_monitor(pid, opts)
      end
    end
  end
end
