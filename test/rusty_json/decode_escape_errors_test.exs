defmodule RustyJson.DecodeEscapeErrorsTest do
  # Bad escapes fail where Jason 1.4.5 fails. The expectations are Jason's rules as its decoder.ex has them
  # (`escape`, `escapeu`, `escape_surrogate`, and the jump table `bytecase` builds), written out here:
  #   - after a backslash, a byte that is no escape fails at that byte if it is below `u` (0x75), and at the
  #     backslash if it is above (the jump table ends at `u`; larger bytes reach the catch-all clause), as does
  #     the end of the input; no token;
  #   - `\u` with fewer than 4 bytes left in the input fails at the backslash, no token;
  #   - `\uXXXX` not 4 hex digits, or a low surrogate (DC00-DFFF) alone: the 6 bytes from the backslash as token;
  #   - a high surrogate (D800-DBFF) not followed by `\u` and 4 more bytes fails at the byte after it, no token;
  #   - then a second escape whose last two digits are not hex: its own 6 bytes, at its backslash; otherwise
  #     whose first two are not DC-DF (case-insensitive): the 12 bytes of both, at the first backslash.
  # Positions are byte offsets, so each case is also tried after multi-byte characters, and in keys.
  use ExUnit.Case, async: true

  alias RustyJson.DecodeError

  @valid_escapes ~c("\\/bfnrtu)

  # Where the case text is put: {prefix, suffix}; positions shift by the prefix's byte size.
  @contexts [
    {~s("), ~s(")},
    # After multi-byte characters, mid-string.
    {~s(["é€😀 abc), ~s( def"])},
    {~s({"), ~s(": 1})},
    {~s({"a": 1, "ü😀), ~s(x": 2})}
  ]

  defp contexts, do: @contexts

  # Jason's message for a DecodeError, from its three rules.
  defp jason_message(input, position, nil) when position == byte_size(input),
    do: "unexpected end of input at position #{position}"

  defp jason_message(input, position, nil) do
    byte = :binary.at(input, position)
    hex = "0x" <> Integer.to_string(byte, 16)

    if String.printable?(<<byte>>),
      do: "unexpected byte at position #{position}: #{hex} (#{inspect(<<byte>>)})",
      else: "unexpected byte at position #{position}: #{hex}"
  end

  defp jason_message(_input, position, token),
    do: "unexpected sequence at position #{position}: #{inspect(token)}"

  defp assert_error(input, position, token) do
    assert {:error, %DecodeError{position: ^position, token: ^token, data: ^input} = error} =
             RustyJson.decode(input),
           "#{inspect(input)}: expected position #{position}, token #{inspect(token)}"

    assert Exception.message(error) == jason_message(input, position, token)
    assert_raise DecodeError, fn -> RustyJson.decode!(input) end
  end

  describe "every byte after a backslash" do
    for byte <- 0..255, byte not in @valid_escapes do
      test "0x#{Integer.to_string(byte, 16)}" do
        byte = unquote(byte)

        for {prefix, suffix} <- contexts() do
          input = prefix <> "\\" <> <<byte>> <> suffix
          backslash = byte_size(prefix)
          position = if byte < ?u, do: backslash + 1, else: backslash
          assert_error(input, position, nil)
        end
      end
    end

    test "the valid ones unescape" do
      for {escape, char} <-
            [{?", "\""}, {?\\, "\\"}, {?/, "/"}, {?b, "\b"}, {?f, "\f"}] ++
              [{?n, "\n"}, {?r, "\r"}, {?t, "\t"}] do
        assert RustyJson.decode(~s(["é\\#{<<escape>>}x"])) == {:ok, ["é" <> char <> "x"]}

        assert RustyJson.decode(~s({"é\\#{<<escape>>}x": 1})) ==
                 {:ok, %{("é" <> char <> "x") => 1}}
      end
    end

    test "the end of the input right after the backslash fails at the backslash" do
      for prefix <- [~s("), ~s(["é€), ~s({"), ~s({"a": 1, "ü)] do
        assert_error(prefix <> "\\", byte_size(prefix), nil)
      end
    end
  end

  # {case text, position relative to the case's first backslash, token or nil}. A token is always a slice of the
  # case text at that position, so it is written as {offset, length}.
  @u_cases [
    # \u with fewer than 4 bytes before the end of the input: only when the case ends the input (below).
    # Not hex, anywhere in the 4 digits; a quote or a brace among them is not hex either.
    {~S(\uG123), 0, {0, 6}},
    {~S(\u1G23), 0, {0, 6}},
    {~S(\u12G3), 0, {0, 6}},
    {~S(\u123G), 0, {0, 6}},
    {~S(\u12"x), 0, {0, 6}},
    {~S(\u é€), 0, {0, 6}},
    # A low surrogate alone.
    {~S(\udc00), 0, {0, 6}},
    {~S(\uDFFF), 0, {0, 6}},
    {~S(\uDc12x), 0, {0, 6}},
    # A high surrogate followed by: a plain character, another escape, `\u` and a non-low escape, `\u` whose
    # last digits are not hex, `\u` whose first ones are not.
    {~S(\ud800x), 6, nil},
    {~S(\uDBFFé), 6, nil},
    {~S(\ud800\n), 6, nil},
    {~S(\ud800\\), 6, nil},
    {~S(\ud800\u0041), 0, {0, 12}},
    {~S(\ud800\ud800), 0, {0, 12}},
    {~S(\ud800\uE000), 0, {0, 12}},
    {~S(\ud800\uxc00), 0, {0, 12}},
    {~S(\ud800\udcxx), 6, {6, 6}},
    {~S(\ud8aa\udcxx), 6, {6, 6}},
    {~S(\ud800\ux0x0), 6, {6, 6}},
    {~S(\ud800\udc0"), 6, {6, 6}}
  ]

  describe "\\u escapes" do
    test "each malformed class, in values and keys, after multi-byte characters" do
      for {text, at, token} <- @u_cases, {prefix, suffix} <- contexts() do
        input = prefix <> text <> suffix
        position = byte_size(prefix) + at

        token =
          case token do
            nil -> nil
            {offset, len} -> binary_part(text, offset, len)
          end

        assert_error(input, position, token)
      end
    end

    test "a high surrogate at the end of a string fails at the closing quote" do
      for {prefix, suffix} <- contexts() do
        input = prefix <> ~S(\ud800) <> suffix
        assert_error(input, byte_size(prefix) + 6, nil)
      end
    end

    test "input ending inside an escape" do
      for prefix <- [~s("), ~s(["é€), ~s({"), ~s({"a": 1, "ü)] do
        at = byte_size(prefix)

        # Fewer than 4 bytes after `\u`: at the backslash, whatever they are (a quote among them included).
        for rest <- ["", "1", "12", "123", "12\"", "\""] do
          assert_error(prefix <> "\\u" <> rest, at, nil)
        end

        # A high surrogate then the end, or `\u` and fewer than 4 bytes: at the byte after the high surrogate.
        assert_error(prefix <> ~S(\ud800), at + 6, nil)

        for rest <- ["\\", "\\u", "\\udc0", "\\udc\""] do
          assert_error(prefix <> ~S(\ud800) <> rest, at + 6, nil)
        end
      end
    end

    test "well-formed ones decode" do
      assert RustyJson.decode(~S(["\u00e9\u20AC\ud83d\ude00\uD83D\uDE00"])) ==
               {:ok, ["é€😀😀"]}

      assert RustyJson.decode(~S({"\ud800\udc00": 1})) == {:ok, %{<<0x10000::utf8>> => 1}}
      assert RustyJson.decode(~S("\udbff\udfff")) == {:ok, <<0x10FFFF::utf8>>}
    end
  end
end
