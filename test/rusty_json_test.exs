defmodule RustyJsonTest do
  use ExUnit.Case, async: true
  doctest RustyJson

  describe "encode!/1 through the NIF" do
    test "scalars" do
      assert RustyJson.encode!(nil) == "null"
      assert RustyJson.encode!(true) == "true"
      assert RustyJson.encode!(false) == "false"
      assert RustyJson.encode!(:atom) == ~s("atom")
      assert RustyJson.encode!(-42) == "-42"
      assert RustyJson.encode!(1.5) == "1.5"
      assert RustyJson.encode!("a\"b\n") == ~s("a\\"b\\n")
    end

    test "lists and maps" do
      assert RustyJson.encode!([1, [2, []], %{}]) == "[1,[2,[]],{}]"
      assert RustyJson.encode!(%{"a" => [true]}) == ~s({"a":[true]})
    end

    test "invalid UTF-8 and unsupported terms are errors" do
      assert {:error, %RustyJson.EncodeError{message: "invalid byte 0xFF in <<255>>"}} =
               RustyJson.encode(<<255>>)

      assert {:error, %Protocol.UndefinedError{value: {1, 2}}} = RustyJson.encode({1, 2})
    end
  end

  describe "decode!/1 through the NIF" do
    test "values" do
      assert RustyJson.decode!(~s( {"a": [1, -2.5, "x", true, false, null]} )) ==
               %{"a" => [1, -2.5, "x", true, false, nil]}

      assert RustyJson.decode!("123456789012345678901234567890") ==
               123_456_789_012_345_678_901_234_567_890

      assert RustyJson.decode!(["[1,", ["2]"]]) == [1, 2]
    end

    test "errors carry Jason's position and message" do
      assert {:error, %RustyJson.DecodeError{position: 3} = error} = RustyJson.decode("[1,]")
      assert Exception.message(error) == ~s|unexpected byte at position 3: 0x5D ("]")|

      assert_raise RustyJson.DecodeError, "unexpected end of input at position 2", fn ->
        RustyJson.decode!("[1")
      end
    end
  end
end
