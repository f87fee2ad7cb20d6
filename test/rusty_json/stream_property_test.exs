defmodule RustyJson.StreamPropertyTest do
  # PropEr (from apt): RustyJson.Stream over generated documents and arrays, cut into random pieces, gives what
  # RustyJson.decode/2 gives for each item, errors at their absolute position and line.
  use ExUnit.Case, async: true

  import RustyJson.Test.StreamRun

  alias RustyJson.DecodeError
  alias RustyJson.Stream, as: JStream
  alias :proper_types, as: T
  alias RustyJson.Test.JsonGen

  # Documents of at most @max_size scalars each (RustyJson.Test.JsonGen), at most @max_documents of them, cut
  # into at most @max_size pieces: a bounded cost per test, so that the properties take seconds even with the
  # CPU shared.
  @max_size 200
  @max_documents 10

  # A document written compactly or pretty, with \u escapes or not.
  defp document do
    T.bind(
      T.tuple([
        JsonGen.value(3),
        T.oneof([T.exactly([]), T.exactly(pretty: true), T.exactly(escape: :unicode_safe)])
      ]),
      fn {v, opts} -> RustyJson.encode!(v, opts) end,
      false
    )
  end

  defp check(prop, numtests \\ 150), do: assert(JsonGen.check(prop, numtests, @max_size) == true)

  # What decode/2 says of each document in turn, errors at their absolute position and line.
  defp expected(docs, separator) do
    Enum.reduce_while(docs, {[], 0}, fn doc, {acc, offset} ->
      case RustyJson.decode(doc) do
        {:ok, v} ->
          {:cont, {[v | acc], offset + byte_size(doc) + byte_size(separator)}}

        {:error, e} ->
          {:halt, {[{:error, offset + e.position} | acc], nil}}
      end
    end)
    |> elem(0)
    |> Enum.reverse()
  end

  defp outcome(results, text) do
    Enum.map(results, fn
      {:error, %DecodeError{position: p, line: line}} ->
        assert line == 1 + length(:binary.matches(binary_part(text, 0, p), "\n"))
        {:error, p}

      v ->
        v
    end)
  end

  test "documents as JSON Lines, cut into random pieces, the last one maybe cut short" do
    check(
      :proper.forall(
        T.tuple([
          T.resize(@max_documents, T.list(document())),
          T.oneof(["\n", "\r\n", " "]),
          T.list(T.non_neg_integer()),
          T.integer(-1, 1000)
        ]),
        fn {docs, sep, cuts, truncate} ->
          docs =
            case {docs, truncate} do
              {[_ | _], t} when t >= 0 ->
                last = List.last(docs)
                short = binary_part(last, 0, rem(t, byte_size(last) + 1))
                List.replace_at(docs, -1, short)

              _ ->
                docs
            end

          docs = Enum.reject(docs, &(String.trim(&1) == ""))
          text = Enum.join(docs, sep)
          chunks = pieces(text, Enum.map(cuts, &rem(&1, byte_size(text) + 1)))
          outcome(run(JStream.decode_documents(chunks)), text) == expected(docs, sep)
        end
      )
    )
  end

  test "one array, cut into random pieces, maybe cut short: its items, or decode/2's error position" do
    check(
      :proper.forall(
        T.tuple([
          JsonGen.array(2),
          T.list(T.non_neg_integer()),
          T.integer(-1, 1000),
          T.boolean()
        ]),
        fn {items, cuts, truncate, pretty} ->
          text = RustyJson.encode!(items, pretty: pretty)

          text =
            if truncate >= 0,
              do: binary_part(text, 0, rem(truncate, byte_size(text) + 1)),
              else: text

          chunks = pieces(text, Enum.map(cuts, &rem(&1, byte_size(text) + 1)))
          got = outcome(run(JStream.decode_array(chunks)), text)

          case RustyJson.decode(text) do
            {:ok, ^items} ->
              got == items

            {:error, e} ->
              {values, [error]} = Enum.split(got, -1)

              # The last value may be a scalar cut short with the stream (`[8.25` gives 8.2, then the error).
              error == {:error, e.position} and
                Enum.drop(values, -1) == Enum.take(items, max(length(values) - 1, 0))
          end
        end
      )
    )
  end
end
