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

  # Escapes cut short or damaged (fewer than 4 hex digits, a high surrogate followed by a bad or cut `\u`, a quote
  # inside one), and valid ones; `after` follows the string's closing quote (what the parser may read as the
  # escape's digits).
  @escapes [
             ~S(\u),
             ~S(\u1),
             ~S(\u12),
             ~S(\u123),
             ~S(\u12x4),
             ~S(\uD83D),
             ~S(\uD83D\u),
             ~S(\uD83D\u1)
           ] ++
             [~S(\uD83D\uDE0), ~S(\uD83D\u"E00), ~S(\uD83D\uDE"0), ~S(\uD83D\u00E9), ~S(\uD83Dx)] ++
             [~S(\uDE00), ~S(\x), "\\", ~S(\uD83D\uDE00), ~S(\u00e9), ~S(\")]
  @afters ["", "E00\"", "12\"", "\"", " "]

  # The error a stream raised (the last of `got`) with its token, or the values.
  defp reported(got) do
    case List.last(got) do
      {:error, _} = error -> with_token(error)
      _ -> got
    end
  end

  defp with_token({:error, %DecodeError{position: p, token: t}}), do: {:error, p, t}
  defp with_token(value), do: value

  # decode/2's error for `text` at `offset` of the stream.
  defp decode_error(text, offset) do
    case RustyJson.decode(text) do
      {:ok, value} -> {:ok, value}
      {:error, e} -> {:error, offset + e.position, e.token}
    end
  end

  # Documents read one after another as decode/2 reads them: the first value of `text` (its prefix up to where
  # decode/2 of the whole stops, when that prefix is a value: `"a"1` is two documents), and so on; at the first
  # that fails, decode/2's error for the text from there on (a stream reads an escape past its document's
  # closing quote as decode/2 reads it: `"\u12"` then `[1]` on the next line fail at the escape, as
  # `"\u12"\n[1]` does, the token `\u12"\n`).
  defp documents_expected(text, offset \\ 0) do
    [blank] = Regex.run(~r/\A[ \t\r\n]*/, text)

    {text, offset} =
      {binary_part(text, byte_size(blank), byte_size(text) - byte_size(blank)),
       offset + byte_size(blank)}

    with false <- text == "",
         {:error, e} <- RustyJson.decode(text),
         {:ok, v} when e.position > 0 <- RustyJson.decode(binary_part(text, 0, e.position)) do
      rest = binary_part(text, e.position, byte_size(text) - e.position)
      [v | documents_expected(rest, offset + e.position)]
    else
      true -> []
      {:ok, v} -> [v]
      _ -> [decode_error(text, offset)]
    end
  end

  # `text` cut at every offset, and into 1-byte pieces.
  defp every_chunking(text) do
    bytes = for <<b <- text>>, do: <<b>>
    [bytes | for(cut <- 0..byte_size(text), do: pieces(text, [cut]))]
  end

  test "damaged escapes: decode/2's error position and token whatever the chunks, in every kind of stream" do
    check(
      :proper.forall(
        T.tuple([T.oneof(@escapes), T.oneof(@afters), T.oneof(@escapes), T.integer(-40, 60)]),
        fn {escape, after_, other, truncate} ->
          short = fn text ->
            if truncate >= 0 and truncate < byte_size(text),
              do: binary_part(text, 0, truncate),
              else: text
          end

          array = short.(~s([1, "a#{escape}"#{after_}, {"k": "#{other}"}, 2]))
          envelope = short.(~s({"m": "#{escape}"#{after_}, "x": [1, "#{other}"], "z": 2}))
          inner = short.(~s({"x": [1, "#{escape}"#{after_}, 2], "z": "#{other}"}))
          lines = short.(~s({"a": 1}\n"#{escape}"#{after_}\n[2, "#{other}"]\n3))

          array_expected =
            case decode_error(array, 0) do
              {:ok, items} -> items
              error -> error
            end

          at_expected = fn text ->
            case decode_error(text, 0) do
              {:ok, value} -> value["x"]
              error -> error
            end
          end

          lines_expected = documents_expected(lines)

          Enum.all?(every_chunking(array), fn chunks ->
            reported(run(JStream.decode_array(chunks))) == array_expected
          end) and
            Enum.all?([envelope, inner], fn text ->
              expected = at_expected.(text)

              Enum.all?(every_chunking(text), fn chunks ->
                reported(run_at_x(chunks)) == expected
              end)
            end) and
            Enum.all?(every_chunking(lines), fn chunks ->
              got = reported(run(JStream.decode_documents(chunks)))

              # After an error only that error is compared: a document cut short by a quote may be more than one
              # to the stream (`"a"E00` is a string, then `E00`), the error is the same.
              case List.last(lines_expected) do
                {:error, _, _} = error -> got == error
                _ -> got == lines_expected
              end
            end)
        end
      ),
      100
    )
  end

  defp run_at_x(chunks) do
    run(JStream.decode_array(chunks, at: "/x"))
  rescue
    e in RustyJson.PathError -> [{:path_error, e.reason}]
  end
end
