defmodule RustyJson.EncodeVectorsTest do
  # Every vector recorded from Jason 1.4.5 (see ../shared/compat/README.md): same input and options, same result.
  use ExUnit.Case, async: true

  alias RustyJson.Reference

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
  defp same?(_input, result, result), do: true

  # Jason writes a map's keys in the running VM's `Map.to_list/1` order. The vectors were recorded on OTP 25, where
  # small maps list atom keys alphabetically; from OTP 26 on they come in atom index order, and atom-keyed hash maps
  # (more than 32 keys) depend on when the atoms were created on any VM. So the recorded bytes are the answer
  # whenever the recorded order of every object is this VM's `Map.to_list/1` order. Otherwise the output must
  # list every object's keys in this VM's `Map.to_list/1` order and be the recorded output with its objects'
  # pairs permuted: the same pairs (duplicates included) per object, and the same bytes in another order.
  defp same?(input, {:ok, expected}, {:ok, got}) do
    Enum.sort(:binary.bin_to_list(got)) == Enum.sort(:binary.bin_to_list(expected)) and
      Enum.all?(Reference.names(), fn ref ->
        with {:ok, e} <- Reference.decode_ordered(ref, expected),
             {:ok, g} <- Reference.decode_ordered(ref, got) do
          not vm_order?(input, e) and vm_order?(input, g) and sort_pairs(e) == sort_pairs(g)
        else
          _ -> false
        end
      end)
  end

  defp same?(_input, _expected, _actual), do: false

  # Whether every object of the decoded output (`{pairs}`) lists its keys in its input map's Map.to_list order.
  defp vm_order?(%_{}, _decoded), do: true

  defp vm_order?(map, {pairs}) when is_map(map) do
    list = Map.to_list(map)

    Enum.map(list, fn {k, _} -> key(k) end) == Enum.map(pairs, &elem(&1, 0)) and
      Enum.all?(Enum.zip(list, pairs), fn {{_, v}, {_, d}} -> vm_order?(v, d) end)
  end

  defp vm_order?(map, _decoded) when is_map(map), do: false

  defp vm_order?(list, decoded) when is_list(list) and is_list(decoded) do
    length(list) == length(decoded) and
      Enum.all?(Enum.zip(list, decoded), fn {v, d} -> vm_order?(v, d) end)
  end

  defp vm_order?(list, _decoded) when is_list(list), do: false
  defp vm_order?(_scalar, _decoded), do: true

  # As Jason converts keys: binaries as they are, atoms by name (nil is "nil"), others by String.Chars.
  defp key(k) when is_binary(k), do: k
  defp key(k) when is_atom(k), do: Atom.to_string(k)
  defp key(k), do: String.Chars.to_string(k)

  # Every object's pairs sorted by key (stably: duplicates keep their order).
  defp sort_pairs({pairs}),
    do: {pairs |> Enum.map(fn {k, v} -> {k, sort_pairs(v)} end) |> List.keysort(0)}

  defp sort_pairs(list) when is_list(list), do: Enum.map(list, &sort_pairs/1)
  defp sort_pairs(other), do: other

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
