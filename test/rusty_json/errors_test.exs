defmodule RustyJson.ErrorsTest do
  use ExUnit.Case, async: true
  doctest RustyJson.EncodeError
  doctest RustyJson.PathError

  alias RustyJson.{DecodeError, EncodeError}

  test "EncodeError.new/1 gives what the encoder returns for the same failure" do
    {:error, invalid} = RustyJson.encode(%{"k" => <<?a, 0xC3, 0x28>>})
    assert EncodeError.new({:invalid_byte, 0xC3, <<?a, 0xC3, 0x28>>}) == invalid
    assert invalid.message == "invalid byte 0xC3 in <<97, 195, 40>>"

    {:error, duplicate} = RustyJson.encode(%{:k => 1, "k" => 2}, maps: :strict)
    assert EncodeError.new({:duplicate_key, "k"}) == duplicate
    assert EncodeError.new({:duplicate_key, :k}) == duplicate
    assert EncodeError.new({:invalid_byte, 0x0A, "x"}).message == ~s(invalid byte 0xA in "x")
  end

  test "DecodeError messages" do
    assert Exception.message(%DecodeError{position: 3, data: "[1,]"}) ==
             ~s{unexpected byte at position 3: 0x5D ("]")}

    assert Exception.message(%DecodeError{position: 1, data: <<?[, 1>>}) ==
             "unexpected byte at position 1: 0x1"

    assert Exception.message(%DecodeError{position: 2, data: "[1"}) ==
             "unexpected end of input at position 2"

    assert Exception.message(%DecodeError{position: 0, token: "1e400", data: "1e400"}) ==
             ~s(unexpected sequence at position 0: "1e400")
  end
end
