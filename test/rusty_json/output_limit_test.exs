defmodule RustyJson.OutputLimitTest do
  # The ceiling on outputs (`max_output_bytes:`) and the layout strings' checks (issue #54): every output whose size
  # the input or an option decides fails into an error naming the size before its memory is allocated. The same
  # inputs at the default ceiling, in a VM whose memory is limited: memory_limited_test.exs.
  use ExUnit.Case, async: true

  import Bitwise

  alias RustyJson.{EncodeError, Formatter, Fragment}

  defp deep_list(depth), do: Enum.reduce(1..depth, [], fn _, acc -> [acc] end)
  defp brackets(depth), do: String.duplicate("[", depth) <> String.duplicate("]", depth)

  # The size Jason's layout gives (the Formatter's output is Jason's byte for byte).
  defp pretty_size(json), do: json |> Formatter.pretty_print() |> byte_size()

  test "the default ceiling is 1 GiB and options without it read it" do
    assert RustyJson.EncodeOptions.max_output_bytes() == 1 <<< 30

    assert RustyJson.EncodeOptions.max_output(RustyJson.EncodeOptions.new(pretty: true)) ==
             1 <<< 30
  end

  test "an output past max_output_bytes is an EncodeError naming its size and the limit" do
    term = List.duplicate("abcdefgh", 1000)
    size = byte_size(RustyJson.encode!(term))

    assert {:ok, json} = RustyJson.encode(term, max_output_bytes: size)
    assert byte_size(json) == size

    assert {:error, %EncodeError{message: message}} =
             RustyJson.encode(term, max_output_bytes: size - 1)

    assert message =~ "more than the max_output_bytes limit of #{size - 1} bytes"

    assert_raise EncodeError, ~r/limit of 100 bytes/, fn ->
      RustyJson.encode!(term, max_output_bytes: 100)
    end
  end

  test "a short output (written on the stack, never grown) is held to the ceiling too" do
    assert {:error, %EncodeError{message: message}} =
             RustyJson.encode(String.duplicate("a", 100), max_output_bytes: 64)

    assert message =~
             "the output would take 102 bytes, more than the max_output_bytes limit of 64 bytes"

    assert RustyJson.encode(String.duplicate("a", 62), max_output_bytes: 64) ==
             {:ok, ~s("#{String.duplicate("a", 62)}")}
  end

  test "pretty output of deep nesting (quadratic in the depth) stops at the ceiling" do
    term = deep_list(3_000)
    size = pretty_size(RustyJson.encode!(term))
    assert size > 9_000_000

    assert {:ok, pretty} = RustyJson.encode(term, pretty: true, max_output_bytes: size)
    assert byte_size(pretty) == size

    assert {:error, %EncodeError{message: message}} =
             RustyJson.encode(term, pretty: true, max_output_bytes: 1_000_000)

    assert message =~
             ~r/the output would take \d+ bytes, more than the max_output_bytes limit of 1000000 bytes/
  end

  test "a fragment laid out in pretty output is counted before it is written" do
    fragment = Fragment.new!(brackets(2_000))
    {:ok, whole} = RustyJson.encode([fragment], pretty: true)

    assert {:error, %EncodeError{message: message}} =
             RustyJson.encode([fragment], pretty: true, max_output_bytes: div(byte_size(whole), 2))

    # The fragment's whole layout is named: the output so far and what it needs.
    [needed] = Regex.run(~r/would take (\d+) bytes/, message, capture: :all_but_first)
    assert String.to_integer(needed) >= byte_size(whole) - 2
  end

  test "values left to Elixir under pretty: the Formatter pass keeps the ceiling" do
    # A fragment function is written by Elixir; pretty output is then laid out by the Formatter.
    term = [Fragment.new(fn _opts -> brackets(2_000) end)]
    size = pretty_size(brackets(2_000) |> then(&"[#{&1}]"))
    assert {:ok, pretty} = RustyJson.encode(term, pretty: true, max_output_bytes: size)
    assert byte_size(pretty) == size

    assert {:error, %EncodeError{}} =
             RustyJson.encode(term, pretty: true, max_output_bytes: size - 1)
  end

  test "the Formatter's exact-size output is checked before it is allocated" do
    deep = brackets(600_000)

    assert_raise EncodeError,
                 ~r/the output would take 720000000000 bytes, more than the max_output_bytes limit of 1073741824 bytes/,
                 fn ->
                   Formatter.pretty_print(deep)
                 end

    assert_raise EncodeError, ~r/limit of 10 bytes/, fn ->
      Formatter.pretty_print("[1,2,3]", max_output_bytes: 10)
    end

    assert Formatter.minimize(" [ 1 ] ", max_output_bytes: 3) == "[1]"
    assert_raise EncodeError, fn -> Formatter.minimize(" [ 1 ] ", max_output_bytes: 2) end
  end

  test "compressed output keeps the ceiling of the JSON it compresses" do
    term = List.duplicate("x", 10_000)
    assert {:ok, gzip} = RustyJson.encode(term, compress: :gzip, max_output_bytes: 1_000_000)
    assert :zlib.gunzip(gzip) == RustyJson.encode!(term)

    assert {:error, %EncodeError{}} =
             RustyJson.encode(term, compress: :gzip, max_output_bytes: 1000)

    assert {:error, %EncodeError{}} =
             RustyJson.encode(term, max_output_bytes: 1000, compress: :gzip)
  end

  test "max_output_bytes must be a positive integer" do
    for bad <- [0, -1, 1.5, :infinity, "10"] do
      assert_raise ArgumentError, ~r/:max_output_bytes/, fn ->
        RustyJson.encode([1], max_output_bytes: bad)
      end

      assert_raise ArgumentError, ~r/:max_output_bytes/, fn ->
        Formatter.pretty_print("[1]", max_output_bytes: bad)
      end
    end
  end

  describe "layout strings" do
    test "an indent of more spaces than a layout string may hold is refused before it is made" do
      for call <- [
            fn -> RustyJson.encode!([1], pretty: 10_000_000_000) end,
            fn -> RustyJson.encode!([1], pretty: [indent: 10_000_000_000]) end,
            fn -> Formatter.pretty_print("[1]", indent: 10_000_000_000) end
          ] do
        assert_raise ArgumentError, ~r/10000000000; expected at most 1073741824 spaces/, call
      end

      assert RustyJson.encode!([1], pretty: 3) == "[\n   1\n]"
      assert Formatter.pretty_print("[1]", indent: 3) == "[\n   1\n]"
    end

    test "only JSON whitespace, so the output stays JSON" do
      for bad <- ["\"", <<0xFF>>, "x", " -"] do
        assert_raise ArgumentError, ~r/expected JSON whitespace only/, fn ->
          RustyJson.encode(%{"a" => [1]}, pretty: bad)
        end

        for key <- [:indent, :line_separator, :after_colon] do
          assert_raise ArgumentError, ~r/pretty option #{inspect(key)}/, fn ->
            RustyJson.encode(%{"a" => [1]}, pretty: [{key, bad}])
          end

          assert_raise ArgumentError, ~r/expected JSON whitespace only/, fn ->
            Formatter.pretty_print(~s({"a":[1]}), [{key, bad}])
          end
        end
      end

      for good <- ["\t", "\r\n", [" ", ?\t], ""] do
        json = RustyJson.encode!(%{"a" => [1]}, pretty: [indent: good, line_separator: "\n"])
        assert RustyJson.decode!(json) == %{"a" => [1]}
      end
    end

    test "a record separator may be any iodata (JSON text sequences)" do
      assert Formatter.minimize("[1] [2]", record_separator: "\x1E") == "[1]\x1E[2]"
    end

    test "a bad indent says what it expected" do
      assert_raise ArgumentError, ~r/:indent: -1; expected iodata or a number of spaces/, fn ->
        Formatter.pretty_print("[1]", indent: -1)
      end

      assert_raise ArgumentError, ~r/:indent: :tab; expected iodata or a number of spaces/, fn ->
        Formatter.pretty_print("[1]", indent: :tab)
      end
    end

    test "a layout string longer than the ceiling on outputs is refused" do
      assert RustyJson.EncodeOptions.layout!(:line_separator, ["\n", "\n"]) == "\n\n"

      assert_raise ArgumentError, ~r/expected at most 1073741824 spaces/, fn ->
        RustyJson.encode([1], pretty: [indent: 1_073_741_825])
      end
    end
  end
end
