defmodule RustyJson.DecodeSchedulingTest do
  # The normal-scheduler decode NIF yields (enif_schedule_nif) every ~0.5 ms, carrying its partial terms across
  # the yield; a yielded decode must give exactly what one uninterrupted (dirty) call gives. Elixir sends it inputs
  # under 256 KiB only, but it takes any size: calling it directly on large inputs makes it yield many times.
  # (Not async: the system monitor is node-wide.)
  use ExUnit.Case, async: false

  alias RustyJson.Native
  alias RustyJson.Test.LongSchedule

  @bench Path.expand("../../../shared/data/bench", __DIR__)

  defp documents do
    shared =
      for name <- ~w(citm_catalog twitter canada twitterescaped update-center),
          path = Path.join(@bench, name <> ".json"),
          File.exists?(path),
          do: File.read!(path)

    same =
      "[" <>
        Enum.map_join(1..60_000, ",", &~s({"id":#{&1},"o":{"k":"v#{&1}","z":[#{&1}]}})) <> "]"

    wide = "{" <> Enum.map_join(1..100_000, ",", &~s("key_#{&1}":"#{&1}")) <> "}"
    deep = String.duplicate(~s({"a":[1,), 100_000) <> "2" <> String.duplicate("]}", 100_000)

    escaped =
      "[" <> Enum.map_join(1..50_000, ",", &~s({"k\\u00e9#{rem(&1, 40)}":"\\n#{&1}"})) <> "]"

    shared ++ [same, wide, deep, escaped]
  end

  test "a yielded decode equals an uninterrupted one, for every option set" do
    for json <- documents(), opts <- [0, 3, 4, 4 + 8, 16] do
      assert Native.decode(json, opts) == Native.decode_dirty(json, opts)
    end
  end

  test "errors after yields keep their positions" do
    json = "[" <> Enum.map_join(1..200_000, ",", &~s({"i":#{&1}})) <> ",x]"
    assert Native.decode(json, 0) == {:error, byte_size(json) - 2}
    assert Native.decode(json, 2) == Native.decode_dirty(json, 2)
  end

  test "inputs under the dirty threshold never hold a normal scheduler 5 ms in one go" do
    # Slow kinds of text per byte that RustyJson.decode/2 runs on the caller's scheduler (under 256 KiB): floats,
    # escaped strings, and nested single-entry objects (no comma to pause at: the parser also pauses after
    # brackets). Their results stay under ~150,000 words: a result of many more costs the caller a garbage
    # collection of that size on its own scheduler once the NIF returns, whatever the NIF does (jiffy's too).
    inputs = [
      "[" <> String.duplicate("1.2345678901234567,", 13_000) <> "0]",
      "[" <> String.duplicate(~s("\\u00e9\\n",), 20_000) <> "0]",
      String.duplicate(~s({"a":), 15_000) <> "1" <> String.duplicate("}", 15_000)
    ]

    for json <- inputs, do: assert(byte_size(json) < 262_144)
    expected = Enum.map(inputs, &RustyJson.decode!/1)

    decoded =
      LongSchedule.without_long_schedules(5, fn ->
        for _ <- 1..3, do: Enum.map(inputs, &RustyJson.decode!/1) == expected
      end)

    assert decoded == [true, true, true]
  end
end
