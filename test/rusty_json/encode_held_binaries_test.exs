defmodule RustyJson.EncodeHeldBinariesTest do
  # Strings held off the process heap (refc binaries, sub-binaries at any byte offset, binaries being appended
  # to, literals, strings built at run time), which the encoder reads by their bits where the VM's layout was
  # learned (`held_binary_reads`): each must encode as its bytes say, and a bitstring that is not whole bytes must
  # still be refused.
  use ExUnit.Case, async: true

  @literal "a literal of more than sixty-four bytes, \"quoted\", with é and a newline\n, kept in the module"

  # The JSON string of text holding only `"`, `\`, newlines and characters that are written as they are.
  defp reference(s) do
    escaped =
      s
      |> String.replace("\\", "\\\\")
      |> String.replace("\"", "\\\"")
      |> String.replace("\n", "\\n")

    "\"" <> escaped <> "\""
  end

  @pattern "ab\"cd\\ef\ngh"
  defp text(n), do: for(i <- 0..(n - 1), into: "", do: <<:binary.at(@pattern, rem(i, 11))>>)

  test "refc binaries and sub-binaries at every byte offset encode as their bytes" do
    for size <- [65, 100, 1_000, 70_000] do
      big = :binary.copy(text(size) <> "é")
      assert RustyJson.encode!(big) == reference(big)

      for offset <- 0..9, len <- [0, 1, 15, 64, 65, size - 9], offset + len <= size do
        part = binary_part(big, offset, len)
        assert RustyJson.encode!([part]) == "[" <> reference(part) <> "]"

        assert RustyJson.encode!(%{part => part}) ==
                 "{" <> reference(part) <> ":" <> reference(part) <> "}"
      end
    end
  end

  test "strings built at run time, appended to and literal" do
    built = for i <- 1..200, do: "#{i}.#{rem(i, 90) + 10} \"#{i}\""
    assert RustyJson.encode!(built) == "[" <> Enum.map_join(built, ",", &reference/1) <> "]"

    appended = Enum.reduce(1..300, "", fn i, acc -> <<acc::binary, ?a + rem(i, 26)>> end)
    assert RustyJson.encode!(appended) == reference(appended)
    # Appended to again after being encoded: both the old and the new value.
    longer = <<appended::binary, "\"tail\"">>

    assert RustyJson.encode!([appended, longer]) ==
             "[#{reference(appended)},#{reference(longer)}]"

    assert RustyJson.encode!(@literal) == reference(@literal)

    assert RustyJson.encode!(binary_part(@literal, 3, 70)) ==
             reference(binary_part(@literal, 3, 70))
  end

  test "sub-binaries of short binaries, at a bit offset, and from splitting" do
    short = text(40) <> "é"

    for offset <- 0..5, len <- [0, 1, 2, 30, byte_size(short) - offset] do
      part = binary_part(short, offset, len)
      assert RustyJson.encode!([part, part]) == "[#{reference(part)},#{reference(part)}]"
    end

    # Whole bytes that start 3 bits into their original: read from the bit, not the byte.
    short_source = text(20)
    long_source = :binary.copy(text(300))
    <<_::3, short_shifted::binary-size(20), _::5>> = <<7::3, short_source::binary, 0::5>>
    <<_::3, long_shifted::binary-size(300), _::5>> = <<7::3, long_source::binary, 0::5>>

    for {shifted, source} <- [{short_shifted, short_source}, {long_shifted, long_source}] do
      assert shifted == source

      assert RustyJson.encode!([shifted, %{shifted => 1}]) ==
               "[#{reference(source)},{#{reference(source)}:1}]"
    end

    line = :binary.copy(Enum.map_join(1..400, ",", &"v#{&1}\"q\""))
    parts = String.split(line, ",")
    assert RustyJson.encode!(parts) == "[" <> Enum.map_join(parts, ",", &reference/1) <> "]"
  end

  test "a bitstring that is not whole bytes is refused, held or not" do
    big = :binary.copy(text(200))

    for bits <- [<<big::binary, 1::3>>, <<binary_part(big, 5, 100)::binary, 0::1>>, <<1::3>>] do
      assert_raise Protocol.UndefinedError, fn -> RustyJson.encode!(bits) end
      assert {:error, _} = RustyJson.encode([bits])
    end
  end

  test "invalid UTF-8 in a held binary is reported as in a short one" do
    big = :binary.copy(text(100) <> <<0xFF>> <> text(100))
    assert {:error, %RustyJson.EncodeError{message: held}} = RustyJson.encode(big)
    assert {:error, %RustyJson.EncodeError{message: short}} = RustyJson.encode(<<"ab", 0xFF>>)
    assert held == "invalid byte 0xFF in #{inspect(big)}"
    assert short == "invalid byte 0xFF in #{inspect(<<"ab", 0xFF>>)}"
  end
end
