defmodule RustyJson.EncodeCompressSchedulingTest do
  # The system monitor is one per node: not async.
  use ExUnit.Case, async: false

  import RustyJson.Test.LongSchedule

  # A multi-MB output compressed at the slowest level must yield between slices, never holding a normal
  # scheduler for long (the same rule as the encoder's; the monitor's threshold leaves room for the VM's noise).
  test "gzip of a multi-MB output at level 9 does not hold a normal scheduler" do
    json =
      RustyJson.encode!(for i <- 1..60_000, do: %{"id" => i, "text" => "item #{i} of the list"})

    assert byte_size(json) > 2_000_000

    gz = without_long_schedules(20, fn -> RustyJson.Native.gzip(json, 9) end)
    assert :zlib.gunzip(gz) == json
  end
end
