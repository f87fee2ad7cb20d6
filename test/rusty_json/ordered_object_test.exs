defmodule RustyJson.OrderedObjectTest do
  use ExUnit.Case, async: true
  doctest RustyJson.OrderedObject

  alias RustyJson.OrderedObject

  test "encodes in order with duplicates, nested, pretty and strict" do
    obj = OrderedObject.new([{"z", 1}, {:a, [OrderedObject.new([])]}, {"z", 2}, {3, nil}])
    assert RustyJson.encode!(obj) == ~s({"z":1,"a":[{}],"z":2,"3":null})

    assert RustyJson.encode!([obj], pretty: true) =~
             ~s(\n    "z": 1,\n    "a": [\n      {}\n    ],)

    assert {:error, %RustyJson.EncodeError{message: "duplicate key: z"}} =
             RustyJson.encode(obj, maps: :strict)

    assert RustyJson.encode!(OrderedObject.new([{~D[2026-01-01], 1}])) == ~s({"2026-01-01":1})
    assert IO.iodata_to_binary(RustyJson.Encoder.encode(obj, [])) == RustyJson.encode!(obj)
  end

  test "Access" do
    obj = OrderedObject.new(a: 1, b: 2, a: 3)
    assert obj[:a] == 1
    assert obj[:c] == nil
    assert put_in(obj[:b], 5).values == [a: 1, b: 5, a: 3]
    # A new key goes first, as in Jason.
    assert put_in(obj[:c], 5).values == [c: 5, a: 1, b: 2, a: 3]
    assert {1, %OrderedObject{values: [b: 2]}} = pop_in(obj[:a])
    assert {nil, ^obj} = Access.pop(obj, :x)

    assert {2, %OrderedObject{values: [a: 1, a: 3]}} =
             Access.get_and_update(obj, :b, fn _ -> :pop end)

    assert_raise RuntimeError, fn -> Access.get_and_update(obj, :b, fn _ -> :bad end) end
  end

  test "Enumerable" do
    obj = OrderedObject.new(a: 1, b: 2)
    assert Enum.count(obj) == 2
    assert Enum.to_list(obj) == [a: 1, b: 2]
    assert {:b, 2} in obj
    refute {:b, 3} in obj
    refute :b in obj
    assert Enum.map(obj, fn {k, v} -> {v, k} end) == [{1, :a}, {2, :b}]
    assert Enum.take(obj, 1) == [a: 1]
  end

  test "an ordered object whose values are not a list raises ArgumentError naming it, wherever it is" do
    for bad <- [
          %RustyJson.OrderedObject{values: 5},
          %{__struct__: RustyJson.OrderedObject},
          %RustyJson.OrderedObject{values: %{a: 1}}
        ],
        term <- [bad, [bad], %{"k" => bad}],
        opts <- [[], [pretty: true], [sort_keys: true]] do
      error = assert_raise ArgumentError, fn -> RustyJson.encode!(term, opts) end
      assert error.message =~ "invalid RustyJson.OrderedObject"
    end
  end
end
