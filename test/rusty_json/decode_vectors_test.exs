defmodule RustyJson.DecodeVectorsTest do
  # Every vector of ../shared/compat/decode.etf: Jason 1.4.5's result for an input and options.
  use ExUnit.Case, async: true

  @path Path.expand("../../../shared/compat/decode.etf", __DIR__)

  @tag timeout: 120_000
  test "every decode.etf vector matches Jason" do
    vectors = @path |> File.read!() |> :erlang.binary_to_term()

    mismatches =
      for {input, opts, expected} <- vectors,
          got = run(input, opts),
          not same?(got, expected),
          do: {input, opts, expected, got}

    for {input, opts, expected, got} <- Enum.take(mismatches, 30) do
      IO.puts(
        "MISMATCH #{inspect(input, limit: 20, printable_limit: 80)} #{inspect(opts)}\n" <>
          "  expected #{inspect(expected, limit: 20, printable_limit: 120)}\n" <>
          "  got      #{inspect(got, limit: 20, printable_limit: 120)}"
      )
    end

    IO.puts(
      "decode.etf: #{length(vectors) - length(mismatches)}/#{length(vectors)} vectors match"
    )

    assert mismatches == []
  end

  defp run(input, opts) do
    case RustyJson.decode(input, opts) do
      {:ok, value} ->
        {:ok, value}

      {:error, %RustyJson.DecodeError{position: p, token: t, data: ^input} = e} ->
        {:error, p, t, Exception.message(e)}
    end
  rescue
    e -> {:raise, e.__struct__, Exception.message(e)}
  end

  defp same?({:ok, got}, {:ok, expected}), do: same_value?(got, expected)
  defp same?({:raise, module, _}, {:raise, module, _}), do: true
  defp same?(got, expected), do: got == expected

  # Exact equality, with floats compared bit for bit (so -0.0 differs from 0.0) and ordered objects translated.
  defp same_value?(%RustyJson.OrderedObject{values: got}, {:ordered_object, expected}),
    do: same_pairs?(got, expected)

  defp same_value?(got, expected) when is_map(got) and is_map(expected) and not is_struct(got) do
    map_size(got) == map_size(expected) and
      Enum.all?(expected, fn {k, v} -> Map.has_key?(got, k) and same_value?(got[k], v) end)
  end

  defp same_value?(got, expected) when is_list(got) and is_list(expected) do
    length(got) == length(expected) and
      Enum.all?(Enum.zip(got, expected), fn {g, e} -> same_value?(g, e) end)
  end

  defp same_value?(got, expected) when is_float(got) and is_float(expected),
    do: <<got::float>> == <<expected::float>>

  defp same_value?(got, expected), do: got === expected

  defp same_pairs?(got, expected) do
    length(got) == length(expected) and
      Enum.all?(Enum.zip(got, expected), fn {{gk, gv}, {ek, ev}} ->
        gk === ek and same_value?(gv, ev)
      end)
  end
end
