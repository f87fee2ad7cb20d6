defmodule RustyJson.Test.StreamRun do
  @moduledoc false
  # What the stream tests and properties do with a stream: run it to its end or its error, and cut a text into
  # chunks.

  alias RustyJson.DecodeError

  @doc "Runs the stream; returns the values and, if it raised, `{:error, exception}` last."
  @spec run(Enumerable.t()) :: list()
  def run(stream) do
    # The values are kept outside the process heap: a stream that raises must still give those before the error.
    acc = :ets.new(:acc, [:ordered_set, :private])

    try do
      Enum.each(Stream.with_index(stream), fn {v, i} -> :ets.insert(acc, {i, v}) end)
      :ets.tab2list(acc) |> Enum.map(&elem(&1, 1))
    rescue
      e in DecodeError -> (:ets.tab2list(acc) |> Enum.map(&elem(&1, 1))) ++ [{:error, e}]
    after
      :ets.delete(acc)
    end
  end

  @doc "`binary` cut at the given offsets (clamped to its size, in any order, repeats ignored)."
  @spec pieces(binary(), [non_neg_integer()]) :: [binary()]
  def pieces(binary, cuts) do
    cuts = cuts |> Enum.map(&min(&1, byte_size(binary))) |> Enum.sort() |> Enum.dedup()

    {parts, last} =
      Enum.map_reduce(cuts, 0, fn cut, from -> {binary_part(binary, from, cut - from), cut} end)

    parts ++ [binary_part(binary, last, byte_size(binary) - last)]
  end

  @doc """
  `head`, then `count` chunks of 1 MiB of `fill` repeated: a token that never ends, as a stream, and a counter of
  the chunks pulled from it (`pulled/1`), to show that a stream failing on it stopped early (no timing).
  """
  @spec endless(binary(), binary(), pos_integer()) :: {Enumerable.t(), :counters.counters_ref()}
  def endless(head, fill, count \\ 20) do
    counter = :counters.new(1, [])
    chunk = :binary.copy(fill, div(1_048_576, byte_size(fill)))

    stream =
      [head]
      |> Stream.concat(Stream.duplicate(chunk, count))
      |> Stream.each(fn _ -> :counters.add(counter, 1, 1) end)

    {stream, counter}
  end

  @doc "The chunks pulled so far from an `endless/3` stream (its head included)."
  @spec pulled(:counters.counters_ref()) :: non_neg_integer()
  def pulled(counter), do: :counters.get(counter, 1)
end
