defmodule RustyJson.EncodeSchedulingTest do
  # A long encode must not hold a normal scheduler: past its budget it yields (or continues on a dirty scheduler).
  # (Not async: the system monitor is node-wide.)
  use ExUnit.Case, async: false

  test "a long encode never runs 20 ms in one go on a normal scheduler" do
    term = Enum.map(1..300_000, &[&1 / 7, "s#{&1}", %{"k" => &1}])
    {us, json} = :timer.tc(fn -> RustyJson.encode!(term) end)

    # 50-150 ms in slices here; held in one go, that would be well over the 20 ms limit (which leaves room for
    # the host's own 10-15 ms stalls of this VM's vCPUs, see decode_scheduling_test.exs).
    assert us > 30_000, "the input should take well over the threshold (took #{us} µs)"

    encoded =
      RustyJson.Test.LongSchedule.without_long_schedules(20, fn ->
        for _ <- 1..3, do: RustyJson.encode!(term) == json
      end)

    assert encoded == [true, true, true]
  end
end

defmodule RustyJson.EncodeSlicesTest do
  # A long encode runs in slices on the normal scheduler (yielding between them) and moves to a dirty scheduler
  # when resuming would be dear: the output must be the same bytes as encoding the pieces one by one (each small
  # enough to finish in one slice).
  use ExUnit.Case, async: true

  defp join(pieces, open, close), do: open <> Enum.join(pieces, ",") <> close

  test "a big map of lists (resumed inside a hash map, many slices)" do
    term = Map.new(1..200, fn i -> {"k#{i}", Enum.map(1..2_000, &(&1 * i + 0.5))} end)

    # Map.to_list order, as Jason writes maps (a comprehension may iterate in another order).
    expected =
      join(
        for({k, v} <- Map.to_list(term), do: RustyJson.encode!(k) <> ":" <> RustyJson.encode!(v)),
        "{",
        "}"
      )

    assert RustyJson.encode!(term) == expected
  end

  test "a long list, taken up where it was at every slice" do
    term = Enum.map(1..400_000, &%{"i" => &1, "s" => "v#{&1}"})
    assert RustyJson.encode!(term) == join(Enum.map(term, &RustyJson.encode!/1), "[", "]")
  end

  test "lists in lists in lists, paused at every depth" do
    term = for i <- 1..60, do: for(j <- 1..500, do: [i, [j, "x#{j}", [j / 3]], %{"k" => [i]}])
    assert RustyJson.encode!(term) == join(Enum.map(term, &RustyJson.encode!/1), "[", "]")
  end

  test "long strings inside lists: a slice stops before each, at a different place in its list" do
    # 100 KB strings (an estimated ~130 us each): a slice stops before one once it has run ~0.67 ms.
    long = String.duplicate("ab\"c", 25_000)

    term = for i <- 1..8, do: Enum.map(1..(i * 2_000), &if(rem(&1, 100) == 0, do: long, else: &1))

    assert RustyJson.encode!(term) == join(Enum.map(term, &RustyJson.encode!/1), "[", "]")
  end

  test "an ordered object and structs resumed across slices" do
    pairs =
      for i <- 1..150_000,
          do: {"k#{i}", [i, %RustyJson.Test.DerivedOnly{id: i, name: "n#{i}", secret: 1}]}

    object = RustyJson.OrderedObject.new(pairs)

    expected =
      join(
        for({k, v} <- pairs, do: RustyJson.encode!(k) <> ":" <> RustyJson.encode!(v)),
        "{",
        "}"
      )

    assert RustyJson.encode!(object) == expected
    assert RustyJson.encode!([object, 1]) == "[" <> expected <> ",1]"
  end

  test "a string too long for one slice, between small values" do
    long = String.duplicate("ab\"c\\é", 4_000_000)
    term = [1, %{"a" => [long, 2]}, long, "z"]
    pieces = Enum.map(term, &RustyJson.encode!/1)
    assert RustyJson.encode!(term) == join(pieces, "[", "]")

    assert RustyJson.encode!(term, escape: :unicode_safe) ==
             join(Enum.map(term, &RustyJson.encode!(&1, escape: :unicode_safe)), "[", "]")
  end
end
