defmodule RustyJson.EncodeStrictKeysTest do
  # `maps: :strict`: the duplicate key in the message is the key's JSON string in the call's escape mode, without
  # its quotes (as Jason writes it), whichever path finds the duplicate.
  use ExUnit.Case, async: true

  alias RustyJson.{Encode, EncodeError, OrderedObject}
  alias RustyJson.Test.{Envelope, Label}

  defp message(term, opts) do
    assert {:error, %EncodeError{message: message}} =
             RustyJson.encode(term, [maps: :strict] ++ opts)

    assert_raise EncodeError, message, fn -> RustyJson.encode!(term, [maps: :strict] ++ opts) end
    message
  end

  test "a backslash, a quote and control bytes are escaped as in the output" do
    assert message(%{"\\" => 1, :"\\" => 2}, []) == ~S(duplicate key: \\)
    assert message(%{"a\"b" => 1, :"a\"b" => 2}, []) == ~S(duplicate key: a\"b)
    assert message(%{"\x1F" => 1, :"\x1F" => 2}, []) == ~S(duplicate key: \u001F)
    assert message(%{"\n\t" => 1, :"\n\t" => 2}, []) == ~S(duplicate key: \n\t)
  end

  test "the escape mode of the call applies" do
    assert message(%{"<" => 1, :< => 2}, escape: :html_safe) == ~S(duplicate key: \u003C)
    assert message(%{"a/b" => 1, :"a/b" => 2}, escape: :html_safe) == ~S(duplicate key: a\/b)
    assert message(%{"<" => 1, :< => 2}, escape: :json) == "duplicate key: <"
    assert message(%{"é" => 1, :é => 2}, escape: :unicode_safe) == ~S(duplicate key: \u00E9)
    assert message(%{"é" => 1, :é => 2}, []) == "duplicate key: é"

    assert message(%{"\u2028" => 1, :"\u2028" => 2}, escape: :javascript_safe) ==
             ~S(duplicate key: \u2028)
  end

  test "sorted, pretty, nested and large maps" do
    assert message(%{"\\" => 1, :"\\" => 2}, sort_keys: true) == ~S(duplicate key: \\)

    assert message([%{x: %{"<" => 1, :< => 2}}], escape: :html_safe, pretty: true) ==
             ~S(duplicate key: \u003C)

    large = Map.new(1..40, &{"k#{&1}", &1}) |> Map.put("\\", 1) |> Map.put(:"\\", 2)
    assert message(large, []) == ~S(duplicate key: \\)
    assert message(large, sort_keys: true) == ~S(duplicate key: \\)
  end

  test "ordered objects and keyword lists" do
    pairs = [{"<", 1}, {:<, 2}]
    assert message(%OrderedObject{values: pairs}, escape: :html_safe) == ~S(duplicate key: \u003C)

    assert_raise EncodeError, ~S(duplicate key: \u003C), fn ->
      Encode.keyword(pairs, escape: :html_safe, maps: :strict)
    end

    assert_raise EncodeError, ~S(duplicate key: \\), fn ->
      Encode.map(%{"\\" => 1, :"\\" => 2}, maps: :strict)
    end
  end

  test "keys converted in Elixir (String.Chars) and maps inside a protocol implementation" do
    assert message(%{%Label{text: "<"} => 1, "label:<" => 2}, escape: :html_safe) ==
             ~S(duplicate key: label:\u003C)

    envelope = %Envelope{body: %{"\x01" => 1, :"\x01" => 2}, meta: 1}
    assert message(envelope, []) == ~S(duplicate key: \u0001)
  end

  test "distinct keys are still written" do
    assert RustyJson.encode!(%{"\\" => 1, "<" => 2}, maps: :strict, escape: :html_safe) ==
             ~S({"\u003C":2,"\\":1})
  end
end
