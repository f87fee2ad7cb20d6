defmodule RustyJson.PointerTest do
  use ExUnit.Case, async: true

  alias RustyJson.Pointer

  doctest RustyJson.Pointer

  test "RFC 6901's examples parse to their tokens" do
    assert Pointer.parse!("") == []
    assert Pointer.parse!("/foo") == ["foo"]
    assert Pointer.parse!("/foo/0") == ["foo", "0"]
    assert Pointer.parse!("/") == [""]
    assert Pointer.parse!("/a~1b") == ["a/b"]
    assert Pointer.parse!("/c%d") == ["c%d"]
    assert Pointer.parse!("/i\\j") == ["i\\j"]
    assert Pointer.parse!("/ ") == [" "]
    assert Pointer.parse!("/m~0n") == ["m~n"]
    # `~01` is `~1` (unescaped in RFC 6901's order), never `/`.
    assert Pointer.parse!("/~01") == ["~1"]
    assert Pointer.parse!("//") == ["", ""]
  end

  test "a ~ not followed by 0 or 1, a missing leading /, or a non-string raise ArgumentError" do
    for bad <- ["/~", "/a~2", "/~a", "a", "#/a", "/a/~"] do
      assert {:error, message} = Pointer.parse(bad)
      assert_raise ArgumentError, message, fn -> Pointer.parse!(bad) end
    end

    assert_raise ArgumentError, ~r/is a string/, fn -> Pointer.parse!(:a) end
  end

  test "escape/1 and parse!/1 round-trip any token" do
    for token <- ["", "a", "~", "/", "~1", "~0/~", "é/~x", "0"] do
      assert Pointer.parse!("/" <> Pointer.escape(token) <> "/x") == [token, "x"]
    end
  end
end
