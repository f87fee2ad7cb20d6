defmodule RustyJson.EncodeVectorsTest do
  # Every vector recorded from Jason 1.4.5 (see ../shared/compat/README.md): same input and options, same result.
  use ExUnit.Case, async: true

  @compat Path.expand("../../../shared/compat", __DIR__)

  defp load(name), do: :erlang.binary_to_term(File.read!(Path.join(@compat, name)))

  defp actual(input, opts) do
    case RustyJson.encode(input, opts) do
      {:ok, json} ->
        {:ok, json}

      {:error, %RustyJson.EncodeError{message: message}} ->
        {:error, :encode_error, message}

      {:error, %Protocol.UndefinedError{protocol: RustyJson.Encoder, value: v}} ->
        {:error, :protocol_undefined, v}
    end
  rescue
    e -> {:raise, e.__struct__, Exception.message(e)}
  end

  defp same?(_input, {:raise, module, _}, {:raise, module, _}), do: true

  # A hash map (more than 32 keys) with atom keys lists its keys in an order that depends on when the atoms were
  # created in the VM (their hash does), so the recording VM's order cannot be reproduced here. What Jason
  # promises is `Map.to_list/1` order: check that, and that the content is the recorded one.
  defp same?(input, {:ok, expected}, {:ok, got})
       when is_map(input) and map_size(input) > 32 and expected != got do
    {members} = :jiffy.decode(got, [:use_nil])

    Enum.any?(Map.keys(input), &is_atom/1) and
      Enum.map(members, &elem(&1, 0)) == Enum.map(Map.to_list(input), &to_string(elem(&1, 0))) and
      :jiffy.decode(got, [:return_maps, :use_nil]) ==
        :jiffy.decode(expected, [:return_maps, :use_nil])
  end

  defp same?(_input, expected, actual), do: expected == actual

  test "encode.etf: every vector gives Jason's result" do
    vectors = load("encode.etf")

    mismatches =
      for {input, opts, expected} <- vectors,
          got = actual(input, opts),
          not same?(input, expected, got),
          do: {input, opts, expected, got}

    IO.puts(
      "encode.etf: #{length(vectors) - length(mismatches)}/#{length(vectors)} vectors match"
    )

    assert mismatches == [], inspect(Enum.take(mismatches, 5), limit: 20, printable_limit: 200)
  end

  test "floats.etf: every float is written as Jason writes it" do
    vectors = load("floats.etf")

    mismatches =
      for {float, expected} <- vectors,
          got = RustyJson.encode!(float),
          got != expected,
          do: {float, expected, got}

    IO.puts(
      "floats.etf: #{length(vectors) - length(mismatches)}/#{length(vectors)} vectors match"
    )

    assert mismatches == [], inspect(Enum.take(mismatches, 10))

    # The same floats inside a list and as map values go through the same writer.
    list = Enum.map(vectors, &elem(&1, 0))
    assert RustyJson.encode!(list) == "[" <> Enum.map_join(vectors, ",", &elem(&1, 1)) <> "]"
  end
end
