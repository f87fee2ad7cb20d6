defmodule RustyJson.DecodeSchedulingTest do
  # Both normal-scheduler decode NIFs yield (enif_schedule_nif) every ~0.5 ms: `decode/2` (Elixir sends it inputs
  # under 64 KiB) carries its partial terms across the yield in the caller's heap, `decode_detached/3` (larger
  # inputs) keeps them in an environment of its own and sends the result as a message. Either must give exactly
  # what one uninterrupted call (`decode_dirty/2`, which never yields) gives; both take any size, and large inputs
  # make them yield many times. (Not async: the system monitor is node-wide.)
  use ExUnit.Case, async: false

  # The longest a normal scheduler may be held in one go. The decodes below take 45-60 ms (the 5.7 MB document)
  # when they do not yield, and slices are ~0.5 ms; but this machine's host stalls its vCPUs for 10-15 ms at
  # times, which the monitor reports as a long schedule of whatever runs then. 5 ms failed on such stalls in
  # every one of six attempts; 20 ms still catches a decode that does not yield.
  @hold_ms 20

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

  # `decode_detached/3` as `RustyJson.decode/2` calls it: `:ok` now, the result in a message.
  defp detached(json, opts) do
    ref = make_ref()
    assert Native.decode_detached(json, opts, ref) == :ok
    assert_received {^ref, result}
    result
  end

  test "a detached decode equals an uninterrupted one, for every option set, and sends one message" do
    for json <- documents(), opts <- [0, 2, 3, 4, 4 + 8, 16] do
      assert detached(json, opts) == Native.decode_dirty(json, opts)
    end

    refute_received _
  end

  test "a detached decode's errors keep their positions, tokens and keys" do
    items = Enum.map_join(1..200_000, ",", &~s({"i":#{&1}}))
    json = "[" <> items <> ",x]"
    assert detached(json, 0) == {:error, byte_size(json) - 2}
    assert detached("[" <> items <> ",1e400]", 0) == {:error, {byte_size(items) + 2, "1e400"}}
    unknown = "[" <> items <> ~s(,{"no_such_atom_#{System.unique_integer([:positive])}":1}])
    assert {:error, {:existing_atom, "no_such_atom_" <> _}} = detached(unknown, 2)
    assert detached(unknown, 2) == Native.decode_dirty(unknown, 2)
  end

  test "RustyJson.decode/2 of a large input leaves the caller's other messages alone" do
    big = "[" <> Enum.map_join(1..20_000, ",", &~s({"i":#{&1},"s":"v#{&1}"})) <> "]"
    assert byte_size(big) >= 65_536
    send(self(), :before)
    assert length(RustyJson.decode!(big)) == 20_000
    assert {:error, %RustyJson.DecodeError{}} = RustyJson.decode(big <> "x")
    send(self(), :after)
    assert_received :before
    assert_received :after
    refute_received _
  end

  test "large inputs never hold a normal scheduler 20 ms in one go" do
    # What RustyJson.decode/2 does with a 5.7 MB document and canada: ~0.5 ms slices, then one message. (The
    # caller's collection of a result this size runs on a dirty scheduler: a `long_gc`, not a `long_schedule`.)
    # Only cheap checks inside the monitored run: `==` on two results this size is itself one long call.
    big = "[" <> Enum.map_join(1..150_000, ",", &~s({"i":#{&1},"f":#{&1}.5,"s":"v#{&1}"})) <> "]"
    canada = Path.join(@bench, "canada.json")
    inputs = [big | if(File.exists?(canada), do: [File.read!(canada)], else: [])]

    # Counted in Elixir, which yields: `length/1` on 150,000 cells just copied by a collection held the scheduler
    # 10 ms by itself on this machine.
    summary = fn
      list when is_list(list) -> {Enum.reduce(list, 0, fn _, n -> n + 1 end), List.last(list)}
      map -> {map_size(map), map["type"]}
    end

    expected = Enum.map(inputs, &summary.(Native.decode_dirty(&1, 0)))
    assert hd(expected) == {150_000, %{"i" => 150_000, "f" => 150_000.5, "s" => "v150000"}}

    decoded =
      LongSchedule.without_long_schedules(@hold_ms, fn ->
        for _ <- 1..3, do: Enum.map(inputs, &summary.(RustyJson.decode!(&1)))
      end)

    assert decoded == [expected, expected, expected]
  end

  # About 15 s here, more with the fast paths off and other work on the machine's two cores.
  @tag timeout: 240_000
  test "objects of a million keys and arrays of millions of items never hold a normal scheduler 20 ms" do
    # One VM map build of a million keys takes a normal scheduler 200-400 ms, and with a duplicate key OTP 29
    # refuses the build (the first try, before the duplicates are dropped). Large containers are built on a dirty
    # scheduler, between normal slices.
    n = 1_000_000
    keys = Enum.map_join(1..n, ",", &~s("key_#{&1}":#{&1}))
    unique = "{" <> keys <> "}"
    duplicate = "{" <> keys <> ~s(,"key_5":0})
    ten_keys = "{" <> Enum.map_join(1..n, ",", &~s("k#{rem(&1, 10)}":#{&1})) <> "}"
    items = "[" <> String.duplicate("1,", 3 * n) <> "1]"
    nested = ~s({"a":[) <> unique <> "," <> items <> "]}"
    inputs = [unique, duplicate, ten_keys, items, nested]

    summary = fn
      list when is_list(list) ->
        {:list, Enum.reduce(list, 0, fn _, n -> n + 1 end)}

      %{"a" => [map, list]} ->
        {:nested, map_size(map), Enum.reduce(list, 0, fn _, n -> n + 1 end)}

      map ->
        {:map, map_size(map), map["key_5"] || map["k5"]}
    end

    expected = [
      {:map, n, 5},
      {:map, n, 5},
      {:map, 10, 5},
      {:list, 3 * n + 1},
      {:nested, n, 3 * n + 1}
    ]

    assert Enum.map(inputs, &summary.(Native.decode_dirty(&1, 0))) == expected

    decoded =
      LongSchedule.without_long_schedules(@hold_ms, fn ->
        Enum.map(inputs, &summary.(RustyJson.decode!(&1)))
      end)

    assert decoded == expected
  end

  test "large objects of small inputs too: the in-heap decode defers their builds as well" do
    # Under 64 KiB (the in-heap decode): objects of 2,048 pairs and more are built on a dirty scheduler.
    object = fn n -> "{" <> Enum.map_join(1..n, ",", &~s("#{&1}":#{rem(&1, 10)})) <> "}" end

    for json <- [
          object.(2_047),
          object.(2_048),
          object.(6_000),
          "[" <> object.(3_000) <> ",[1,2]]"
        ] do
      assert byte_size(json) < 65_536
      assert Native.decode(json, 0) === Native.decode_dirty(json, 0)
      assert RustyJson.decode!(json) === Native.decode_dirty(json, 0)
    end
  end

  test "a caller killed during a detached decode takes the decode with it" do
    big = "[" <> Enum.map_join(1..300_000, ",", &~s({"i":#{&1},"f":#{&1}.5})) <> "]"

    for delay <- [0, 1, 3, 10] do
      pid = spawn(fn -> RustyJson.decode!(big) end)
      Process.sleep(delay)
      ref = Process.monitor(pid)
      Process.exit(pid, :kill)
      assert_receive {:DOWN, ^ref, :process, ^pid, _}
    end

    assert length(RustyJson.decode!(big)) == 300_000
  end

  test "errors after yields keep their positions" do
    json = "[" <> Enum.map_join(1..200_000, ",", &~s({"i":#{&1}})) <> ",x]"
    assert Native.decode(json, 0) == {:error, byte_size(json) - 2}
    assert Native.decode(json, 2) == Native.decode_dirty(json, 2)
  end

  test "slow kinds of text never hold a normal scheduler 20 ms in one go" do
    # The slowest text per byte: floats, escaped strings, and nested single-entry objects (no comma to pause at:
    # the parser also pauses after brackets), on either side of the 64 KiB line between the in-heap decode and
    # the detached one. Their results stay under ~150,000 words, so comparing them below is quick.
    inputs = [
      "[" <> String.duplicate("1.2345678901234567,", 3_000) <> "0]",
      "[" <> String.duplicate("1.2345678901234567,", 13_000) <> "0]",
      "[" <> String.duplicate(~s("\\u00e9\\n",), 20_000) <> "0]",
      String.duplicate(~s({"a":), 15_000) <> "1" <> String.duplicate("}", 15_000)
    ]

    assert Enum.any?(inputs, &(byte_size(&1) < 65_536))
    assert Enum.any?(inputs, &(byte_size(&1) >= 65_536))
    expected = Enum.map(inputs, &RustyJson.decode!/1)

    decoded =
      LongSchedule.without_long_schedules(@hold_ms, fn ->
        for _ <- 1..3, do: Enum.map(inputs, &RustyJson.decode!/1) == expected
      end)

    assert decoded == [true, true, true]
  end
end
