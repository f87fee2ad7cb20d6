defmodule RustyJson.DecodeKeys do
  @moduledoc false
  # `keys: fun`. The NIF returns ordered objects and the function runs here, in Jason's order and at Jason's time:
  # Jason converts a key once its pair is complete (the value and the `,` or `}` after it read), so the keys of a
  # value come before the key of its pair, and on invalid input the keys of the pairs completed before the error
  # have been converted (a raising function's exception wins over the DecodeError). (`keys: :atoms`/`:atoms!` follow
  # the same timing in the parser, which reports a key it cannot convert after its pair's `,` or `}`.)

  @typedoc "The function, whether ordered objects were asked for, and the `duplicate_keys` mode."
  @type how :: {(String.t() -> term()), boolean(), :first | :last | :error}

  @doc """
  Applies the function to every key of `term` (the NIF's result, objects as ordered pairs) in Jason's order, then
  builds maps where the first of equal keys wins (the last with `duplicate_keys: :last`), unless ordered objects
  were asked for. With `duplicate_keys: :error` the pairs carry their key's position, and the first object to
  close with a key whose result repeats an earlier one's is `{:error, {position, token}}`, as the NIF reports.
  """
  @spec apply(term(), binary(), how()) :: term() | {:error, {non_neg_integer(), binary()}}
  def apply(term, input, how) do
    apply_keys(term, how)
  catch
    {:duplicate_key, position} -> {:error, {position, key_token(input, position)}}
  end

  @doc """
  For a decode error at `position` (the NIF's reason): calls `fun` on the keys, decoded, of the pairs Jason
  completed before the error, in Jason's order. Returns `:ok`, or raises what `fun` raises.
  """
  @spec before_error(
          binary(),
          non_neg_integer() | {non_neg_integer(), term()},
          (String.t() -> term())
        ) ::
          :ok
  def before_error(input, {position, _token}, fun), do: before_error(input, position, fun)

  def before_error(input, position, fun) when is_integer(position) do
    input
    |> binary_part(0, min(position, byte_size(input)))
    |> completed_keys(0, [], [])
    |> Enum.each(fn {start, length} ->
      fun.(RustyJson.decode!(binary_part(input, start, length)))
    end)
  end

  defp apply_keys(%RustyJson.OrderedObject{values: pairs}, {_fun, ordered, duplicates} = how) do
    pairs =
      case duplicates do
        :error -> pairs |> Enum.map(&apply_key(&1, how)) |> unique_keys(%{})
        _ -> Enum.map(pairs, &apply_key(&1, how))
      end

    cond do
      ordered -> %RustyJson.OrderedObject{values: pairs}
      duplicates == :last -> :maps.from_list(pairs)
      true -> pairs |> :lists.reverse() |> :maps.from_list()
    end
  end

  defp apply_keys(list, how) when is_list(list), do: Enum.map(list, &apply_keys(&1, how))
  defp apply_keys(other, _how), do: other

  # The value first: its keys are converted before the key of its pair.
  defp apply_key({k, v}, {fun, _, _} = how) do
    v = apply_keys(v, how)
    {fun.(k), v}
  end

  defp apply_key({k, v, at}, {fun, _, _} = how) do
    v = apply_keys(v, how)
    {fun.(k), v, at}
  end

  defp unique_keys([], _seen), do: []

  defp unique_keys([{k, v, at} | rest], seen) do
    if Map.has_key?(seen, k), do: throw({:duplicate_key, at})
    [{k, v} | unique_keys(rest, Map.put(seen, k, true))]
  end

  # The key at `position` (its opening quote) as written in the input, quotes included.
  defp key_token(input, position), do: key_token(input, position, position + 1)

  defp key_token(input, start, i) do
    case :binary.at(input, i) do
      ?" -> binary_part(input, start, i + 1 - start)
      ?\\ -> key_token(input, start, i + 2)
      _ -> key_token(input, start, i + 1)
    end
  end

  # The keys (`{start, length}` of the quoted key) of the pairs completed in `prefix`, the input before the error,
  # in the order their pairs completed. `prefix` is valid JSON so far, so only strings and brackets matter. Frames:
  # `:array`, `:key` (an object expecting a key) or `{start, length}` (an object inside the pair of that key).
  defp completed_keys(<<?", rest::binary>>, i, frames, keys) do
    case string_end(rest, i + 1) do
      nil ->
        :lists.reverse(keys)

      {rest, j} when hd(frames) == :key ->
        completed_keys(rest, j, [{i, j - i} | tl(frames)], keys)

      {rest, j} ->
        completed_keys(rest, j, frames, keys)
    end
  end

  defp completed_keys(<<?{, rest::binary>>, i, frames, keys),
    do: completed_keys(rest, i + 1, [:key | frames], keys)

  defp completed_keys(<<?[, rest::binary>>, i, frames, keys),
    do: completed_keys(rest, i + 1, [:array | frames], keys)

  defp completed_keys(<<?,, rest::binary>>, i, [{_, _} = key | up], keys),
    do: completed_keys(rest, i + 1, [:key | up], [key | keys])

  defp completed_keys(<<?}, rest::binary>>, i, [{_, _} = key | up], keys),
    do: completed_keys(rest, i + 1, up, [key | keys])

  defp completed_keys(<<byte, rest::binary>>, i, [_ | up], keys) when byte in [?], ?}],
    do: completed_keys(rest, i + 1, up, keys)

  defp completed_keys(<<_, rest::binary>>, i, frames, keys),
    do: completed_keys(rest, i + 1, frames, keys)

  defp completed_keys(<<>>, _i, _frames, keys), do: :lists.reverse(keys)

  # After a string's opening quote at `i - 1`: the rest after its closing quote and that quote's end offset, or
  # nil when the string does not end in the prefix.
  defp string_end(bytes, i) do
    case :binary.match(bytes, ["\"", "\\"]) do
      {at, 1} ->
        string_end(bytes, at, i)

      :nomatch ->
        nil
    end
  end

  # The quote or backslash at `at`: the string's end, or an escape to step over (nil: cut by the prefix's end).
  defp string_end(bytes, at, i) do
    case :binary.at(bytes, at) do
      ?" ->
        {binary_part(bytes, at + 1, byte_size(bytes) - at - 1), i + at + 1}

      ?\\ when byte_size(bytes) >= at + 2 ->
        string_end(binary_part(bytes, at + 2, byte_size(bytes) - at - 2), i + at + 2)

      ?\\ ->
        nil
    end
  end
end
