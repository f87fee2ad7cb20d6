defmodule RustyJson.EncodeSchedulingTest do
  # A long encode must not hold a normal scheduler: past its budget it continues on a dirty scheduler.
  # (Not async: the system monitor is node-wide.)
  use ExUnit.Case, async: false

  test "a long encode never runs 5 ms in one go on a normal scheduler" do
    term = Enum.map(1..300_000, &[&1 / 7, "s#{&1}", %{"k" => &1}])
    {us, json} = :timer.tc(fn -> RustyJson.encode!(term) end)
    assert us > 10_000, "the input should take well over the threshold (took #{us} µs)"

    previous = :erlang.system_monitor(self(), [{:long_schedule, 5}])

    try do
      # The VM does not report the monitoring process itself: encode in another one.
      task = Task.async(fn -> for _ <- 1..3, do: RustyJson.encode!(term) == json end)
      assert Task.await(task, 30_000) == [true, true, true]
      refute_receive {:monitor, _, :long_schedule, _}, 100
    after
      case previous do
        :undefined -> :erlang.system_monitor(:undefined)
        {pid, opts} -> :erlang.system_monitor(pid, opts)
      end
    end
  end
end
