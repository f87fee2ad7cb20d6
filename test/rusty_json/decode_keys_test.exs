defmodule RustyJson.DecodeKeysTest do
  # `keys: fun` is called as Jason calls it: on a key once its pair is complete (its value and the `,` or `}` after
  # it read), so a value's keys come before its own; on invalid input, on exactly the keys of the pairs completed
  # before the error, so an exception the function raises wins over the DecodeError.
  use ExUnit.Case, async: true

  alias RustyJson.{DecodeError, OrderedObject}

  # The keys the function was called on, in order, and the result.
  defp calls(json, opts \\ []) do
    me = self()
    tag = make_ref()
    result = RustyJson.decode(json, [keys: &send(me, {tag, &1})] ++ opts)
    {keys(tag), result}
  end

  defp keys(tag) do
    receive do
      {^tag, key} -> [key | keys(tag)]
    after
      0 -> []
    end
  end

  describe "order" do
    test "a value's keys before its own key" do
      assert {["inner", "outer", "second"], {:ok, _}} =
               calls(~s({"outer":{"inner":1},"second":2}))

      assert {["c", "d", "b", "a", "e"], {:ok, _}} =
               calls(~s({"a": {"b": [{"c": 1}, {"d": 2}]}, "e": 3}))

      assert {["x", "y", "z"], {:ok, _}} = calls(~s([{"x": 1, "y": 2}, {"z": 3}]))
    end

    test "every key, repeated ones too, in ordered objects too" do
      assert {["b", "a", "b"], {:ok, %OrderedObject{}}} =
               calls(~s({"a": {"b": 1}, "b": 2}), objects: :ordered_objects)

      assert {["a", "a"], {:ok, _}} = calls(~s({"a": 1, "a": 2}))
    end

    test "keys are passed decoded" do
      assert {["é\"\n", "\\/"], {:ok, _}} = calls(~s({"\\u00e9\\"\\n": 1, "\\\\\\/": 2}))
    end

    test "the results build the objects, first equal result wins" do
      fun = fn key -> String.downcase(key) end

      assert RustyJson.decode!(~s({"A": {"B": 1, "b": 2}, "a": 3}), keys: fun) ==
               %{"a" => %{"b" => 1}}
    end
  end

  describe "invalid input" do
    test "a raising function's exception wins once a pair is complete" do
      fun = fn key -> raise "key #{key}" end

      assert_raise RuntimeError, "key a", fn ->
        RustyJson.decode(~s({"a": 1, "a": x}), keys: fun)
      end

      assert_raise RuntimeError, "key a", fn ->
        RustyJson.decode!(~s({"a": 1, "a": x}), keys: fun)
      end

      assert_raise RuntimeError, "key b", fn ->
        RustyJson.decode(~s({"a": {"b": 1}]), keys: fun)
      end

      # No pair complete: the DecodeError.
      assert {:error, %DecodeError{position: 8}} = RustyJson.decode(~s({"a": 1 x}), keys: fun)
      assert {:error, %DecodeError{position: 6}} = RustyJson.decode(~s({"a": x}), keys: fun)
    end

    test "exactly the keys of the pairs completed before the error, in Jason's order" do
      assert {["a"], {:error, %DecodeError{position: 14}}} = calls(~s({"a": 1, "a": x}))
      assert {[], {:error, %DecodeError{position: 11}}} = calls(~s({"a":{"b":1]))
      assert {["b"], {:error, %DecodeError{position: 12}}} = calls(~s({"a":{"b":1}]))
      assert {["b", "a"], {:error, %DecodeError{position: 13}}} = calls(~s({"a":{"b":1},]))
      assert {["b", "a"], {:error, %DecodeError{position: 14}}} = calls(~s({"a": {"b":1}}x))
      assert {["a"], {:error, %DecodeError{position: 8}}} = calls(~s({"a": 1,}))

      assert {["a"], {:error, %DecodeError{position: 14, token: "1e400"}}} =
               calls(~s({"a": 1, "b": 1e400}))
    end

    test "brackets, commas and escaped quotes inside strings are not structure" do
      assert {["a}"], {:error, %DecodeError{}}} =
               calls(~s({"a}": "[,}\\"", "c": {"d\\\\": [1, x]}, "e": 1}))

      assert {["a}", "d\\"], {:error, %DecodeError{}}} =
               calls(~s({"a}": "[,}\\"", "c": {"d\\\\": [1], "e": x}}))
    end

    test "an error inside a key or a string value" do
      assert {["a"], {:error, %DecodeError{position: 11}}} = calls(~s({"a": 1, "b\\x": 1}))
      assert {["a"], {:error, %DecodeError{}}} = calls(~s({"a": 1, "b": "\\q"}))
      assert {["a"], {:error, %DecodeError{}}} = calls(~s({"a": 1, "b": "unterminated, }))
    end

    test "a function that does not raise gives the same error as without it" do
      for json <- [~s({"a": 1, "a": x}), ~s([{"a": {"b": 1}}, ]), ~s({"a": 1}}), "{"] do
        assert elem(calls(json), 1) == RustyJson.decode(json)
      end
    end

    test "large input (decoded detached) and a stream item" do
      items = Enum.map_join(1..5_000, ",", &~s({"k#{&1}": #{&1}}))
      {keys, {:error, %DecodeError{}}} = calls("[" <> items <> ", x]")
      assert keys == Enum.map(1..5_000, &"k#{&1}")

      fun = fn key -> raise "key #{key}" end

      assert_raise RuntimeError, "key a", fn ->
        [~s({"a": 1, "b": x}\n)] |> RustyJson.Stream.decode_documents(keys: fun) |> Enum.to_list()
      end
    end
  end

  describe "keys: :atoms! and :atoms on invalid input" do
    # A key that is no atom (never made one: the tests only ask for existing atoms).
    @missing "rusty_json_decode_keys_test_no_such_atom"

    test "a key whose pair is not complete at the error is not made an atom: the DecodeError" do
      # The position of the `x` at the end.
      json = ~s({"#{@missing}": x)
      at = byte_size(json) - 1
      assert {:error, %DecodeError{position: ^at}} = RustyJson.decode(json, keys: :atoms!)
      assert_raise DecodeError, fn -> RustyJson.decode!(json, keys: :atoms!) end

      json = ~s({"a": {"#{@missing}": 1 x)
      at = byte_size(json) - 1
      assert {:error, %DecodeError{position: ^at}} = RustyJson.decode(json, keys: :atoms!)

      long = String.duplicate("é", 300)
      assert {:error, %DecodeError{}} = RustyJson.decode(~s({"#{long}": x), keys: :atoms)
    end

    test "a completed pair's key, or valid input, raises as Jason does" do
      for json <- [
            ~s({"#{@missing}": 1, "b": x),
            ~s({"a": {"#{@missing}": 1}, x),
            ~s({"#{@missing}": 1})
          ] do
        assert_raise ArgumentError, fn -> RustyJson.decode(json, keys: :atoms!) end
      end

      long = String.duplicate("é", 300)

      assert_raise SystemLimitError, fn ->
        RustyJson.decode(~s({"#{long}": 1, x), keys: :atoms)
      end
    end

    test "the same in a stream item" do
      stream = RustyJson.Stream.decode_documents([~s({"#{@missing}": x}\n)], keys: :atoms!)
      assert_raise DecodeError, fn -> Enum.to_list(stream) end
    end
  end
end
