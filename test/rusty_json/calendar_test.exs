defmodule RustyJson.CalendarTest do
  use ExUnit.Case, async: true

  # The NIF writes Calendar.ISO dates and times itself: it must match `to_iso8601/1` exactly.

  defp datetime(naive, utc, std, zone) do
    %DateTime{
      year: naive.year,
      month: naive.month,
      day: naive.day,
      hour: naive.hour,
      minute: naive.minute,
      second: naive.second,
      microsecond: naive.microsecond,
      utc_offset: utc,
      std_offset: std,
      time_zone: zone,
      zone_abbr: "X"
    }
  end

  defp check(value) do
    expected = ~s(") <> value.__struct__.to_iso8601(value) <> ~s(")
    assert RustyJson.encode!(value) == expected
    assert RustyJson.encode!([value, %{"d" => value}]) == "[#{expected},{\"d\":#{expected}}]"
  end

  test "dates, times, naive and zoned datetimes match to_iso8601" do
    :rand.seed(:exsss, {1, 2, 3})

    for _ <- 1..2000 do
      year = Enum.random([-10_000, -1, 0, 1, 999, 2026, 9999, 10_000, :rand.uniform(3000)])
      date = %Date{year: year, month: :rand.uniform(12), day: :rand.uniform(28)}
      precision = :rand.uniform(7) - 1
      us = if precision == 0, do: Enum.random([0, 5]), else: :rand.uniform(1_000_000) - 1

      time = %Time{
        hour: :rand.uniform(24) - 1,
        minute: :rand.uniform(60) - 1,
        second: :rand.uniform(60) - 1,
        microsecond: {us, precision}
      }

      {:ok, naive} = NaiveDateTime.new(date, time)
      offset = Enum.random([0, 3600, -3600, 19_800, -12_600, 45_296, -1])
      std = Enum.random([0, 0, 3600])
      zone = Enum.random(["Etc/UTC", "Europe/Paris", "Asia/Kolkata"])

      for value <- [date, time, naive, datetime(naive, offset, std, zone)], do: check(value)
    end
  end

  test "edge cases" do
    check(~U[2026-11-22 12:00:00Z])
    check(~U[2026-11-22 12:00:00.000Z])
    check(datetime(~N[2026-01-01 00:00:00], 0, 0, "Europe/London"))
    check(~T[23:59:59.999999])
    # Another calendar, or odd fields: the protocol path, same text as Jason.
    odd = %Date{year: 2026, month: 1, day: 2, calendar: RustyJson.Test.NoSuchCalendar}
    assert_raise UndefinedFunctionError, fn -> RustyJson.encode!(odd) end
  end
end
