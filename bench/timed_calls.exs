defmodule RustyJson.Bench.TimedCalls do
  @moduledoc false
  # Times a call, `runs` times, each in a fresh process (as in a request process), under the VM's
  # `long_schedule` monitor at 1 ms: the fastest call's time and the longest time any process held a normal
  # scheduler in one go (0 when none reached 1 ms). Used by worst_case.exs and holds.exs.

  @spec run((() -> term()), pos_integer()) :: %{us: non_neg_integer(), hold_ms: non_neg_integer()}
  def run(call, runs) do
    previous = :erlang.system_monitor(self(), [{:long_schedule, 1}])

    times =
      for _ <- 1..runs do
        task =
          Task.async(fn ->
            {us, _} = :timer.tc(call)
            us
          end)

        Task.await(task, :infinity)
      end

    case previous do
      :undefined -> :erlang.system_monitor(:undefined)
      {pid, opts} -> :erlang.system_monitor(pid, opts)
    end

    :erlang.garbage_collect()
    %{us: Enum.min(times), hold_ms: longest_hold(0)}
  end

  defp longest_hold(longest) do
    receive do
      {:monitor, _, :long_schedule, info} -> longest_hold(max(longest, info[:timeout]))
    after
      0 -> longest
    end
  end
end
