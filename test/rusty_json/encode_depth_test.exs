defmodule RustyJson.EncodeDepthTest do
  # Deep nesting encoded in slices: each slice's checkpoint writes only the frames that slice pushed or took up
  # (the frames under them are shared with the previous checkpoint), so the work of stopping and resuming grows
  # linearly with the depth, not with depth times slices. Counted, not timed: `Native.encode_stats/0`.
  # Not async: the counters and the system monitor are node-wide.
  use ExUnit.Case, async: false

  import RustyJson.Test.LongSchedule, only: [without_long_schedules: 2]

  alias RustyJson.{Fragment, Native, OrderedObject}
  alias RustyJson.Test.DerivedOnly

  defp lists(depth), do: Enum.reduce(1..depth, 1, fn _, acc -> [acc] end)
  defp maps(depth), do: Enum.reduce(1..depth, 1, fn _, acc -> %{"a" => acc} end)

  # `{checkpoints, frames saved, frames restored}` that `fun` cost, and its result.
  defp counted(fun) do
    before = Native.encode_stats()
    result = fun.()
    {Enum.zip_with(Tuple.to_list(Native.encode_stats()), Tuple.to_list(before), &-/2), result}
  end

  describe "the work of resuming deep nesting" do
    test "frames saved and restored: at most one per container opened, plus one per checkpoint" do
      for {kind, build, per_level} <- [{:lists, &lists/1, 2}, {:maps, &maps/1, 6}],
          depth <- [100_000, 200_000, 400_000] do
        term = build.(depth)
        {[checkpoints, saved, restored], json} = counted(fn -> RustyJson.encode!(term) end)
        assert byte_size(json) == per_level * depth + 1

        # A slice writes into its checkpoint the frames it opened and at most the one it took up and left open;
        # it takes up the frames it closes and at most one more. Copying every open frame at every checkpoint (as
        # before) made this depth times checkpoints.
        assert saved <= depth + checkpoints,
               "#{kind} #{depth}: #{saved} saved, #{checkpoints} checkpoints"

        assert restored <= depth + checkpoints, "#{kind} #{depth}: #{restored} restored"

        # Not vacuous: the containers are opened, then closed, across slices (400,000 units of work are many
        # slices of 0.8 ms), the frames saved and taken up again.
        if depth == 400_000 do
          assert checkpoints >= 2 and saved > 0 and restored > 0,
                 "#{kind}: #{checkpoints} checkpoints"
        end
      end
    end

    test "a 1,000,000-deep list and a 400,000-deep map never hold a normal scheduler 20 ms" do
      # Copying every open frame into each checkpoint held it 90 ms (the list) and 36 ms (the map) in one go.
      list = lists(1_000_000)
      json = without_long_schedules(20, fn -> RustyJson.encode!(list) end)
      assert json == String.duplicate("[", 1_000_000) <> "1" <> String.duplicate("]", 1_000_000)

      map = maps(400_000)
      json = without_long_schedules(20, fn -> RustyJson.encode!(map) end)
      assert json == String.duplicate(~s({"a":), 400_000) <> "1" <> String.duplicate("}", 400_000)
    end
  end

  describe "deep nesting resumed across slices writes what small walks write" do
    # Each level wraps the next in one of these containers, with siblings before and after it, so slices stop at
    # every kind of frame and take it up again in the middle of its elements. The expected text is each wrapper
    # encoded alone around a placeholder: small encodes that never stop.
    @placeholder "\u0000inner\u0000"
    defp wrap(i, inner) do
      case rem(i, 6) do
        0 -> [i, inner, "s#{i}"]
        1 -> %{"a" => i, "b" => inner, "c" => [i]}
        2 -> %DerivedOnly{id: i, name: inner, secret: 1}
        3 -> OrderedObject.new([{"z", i}, {"y", inner}, {"x", nil}])
        4 -> [inner]
        5 when rem(i, 1_000) == 5 -> Map.new(1..40, &{"k#{&1}", &1}) |> Map.put("k20", inner)
        5 -> %{"o" => inner}
      end
    end

    defp nested(depth), do: Enum.reduce(depth..1//-1, true, &wrap/2)

    defp expected(depth) do
      placeholder = RustyJson.encode!(@placeholder)

      {opens, closes} =
        Enum.map(1..depth, fn i ->
          [open, close] = String.split(RustyJson.encode!(wrap(i, @placeholder)), placeholder)
          {open, close}
        end)
        |> Enum.unzip()

      IO.iodata_to_binary([opens, "true", Enum.reverse(closes)])
    end

    test "compact, 60,000 levels of lists, maps, hash maps, structs and ordered objects" do
      # The expected text first: it also registers the derived struct's template (met first, it is a hole).
      expected = expected(60_000)
      term = nested(60_000)
      {[checkpoints, _, _], json} = counted(fn -> RustyJson.encode!(term) end)
      assert json == expected
      assert checkpoints >= 2
    end

    test "pretty, 1,500 levels (indentation by the depth of frames taken up again)" do
      expected = expected(1_500)
      term = nested(1_500)
      json = RustyJson.encode!(term, pretty: true)
      assert json == RustyJson.encode!(Fragment.new(RustyJson.encode!(term)), pretty: true)
      assert json == RustyJson.Formatter.pretty_print(expected)
    end
  end
end
