defmodule RustyJson.StreamAtTest do
  # RustyJson.Stream.decode_array/2 with `at:`: the items of the array at a JSON Pointer of the document and, with
  # `envelope: true`, the rest of it; the same whatever the chunks (PropEr over generated documents cut
  # anywhere), errors at decode/2's positions, a missing path or a non-array a PathError after the stream.
  use ExUnit.Case, async: true

  import RustyJson.Test.StreamRun

  alias RustyJson.{DecodeError, PathError}
  alias RustyJson.Stream, as: JStream
  alias :proper_types, as: T
  alias RustyJson.Test.JsonGen

  @max_size 200

  defp check(prop, numtests \\ 150), do: assert(JsonGen.check(prop, numtests, @max_size) == true)

  # A document holding `items` at `pointer`, with `meta` around it (before and after the array).
  defp envelope("/data", items, meta), do: %{"a" => meta, "data" => items, "z" => [meta, 1]}

  defp envelope("/hits/hits", items, meta),
    do: %{"hits" => %{"total" => 3, "hits" => items, "max" => meta}}

  defp envelope("/1/l~1ist", items, meta), do: [meta, %{"l/ist" => items, "m" => meta}, meta]
  defp envelope("", items, _meta), do: items

  # `value` with the array at `tokens` emptied (what `envelope: true` gives).
  defp emptied(_value, []), do: []

  defp emptied(list, [i | rest]) when is_list(list),
    do: List.update_at(list, String.to_integer(i), &emptied(&1, rest))

  defp emptied(map, [k | rest]), do: Map.update!(map, k, &emptied(&1, rest))

  test "the array at a path, cut into random pieces, maybe cut short or with a byte changed" do
    check(
      :proper.forall(
        T.tuple([
          JsonGen.array(2),
          JsonGen.value(2),
          T.oneof(["/data", "/hits/hits", "/1/l~1ist", ""]),
          T.list(T.non_neg_integer()),
          T.integer(-1, 2000),
          T.oneof([T.exactly(nil), T.tuple([T.non_neg_integer(), T.oneof(~c"[]{}\",:1 xe\\")])]),
          T.boolean()
        ]),
        fn {items, meta, pointer, cuts, truncate, change, pretty} ->
          text = RustyJson.encode!(envelope(pointer, items, meta), pretty: pretty)

          text =
            if truncate >= 0,
              do: binary_part(text, 0, rem(truncate, byte_size(text) + 1)),
              else: text

          text =
            case {change, text} do
              {{at, byte}, <<_, _::binary>>} ->
                at = rem(at, byte_size(text))
                rest = binary_part(text, at + 1, byte_size(text) - at - 1)
                binary_part(text, 0, at) <> <<byte>> <> rest

              _ ->
                text
            end

          chunks = pieces(text, Enum.map(cuts, &rem(&1, byte_size(text) + 1)))
          got = run_at(chunks, pointer)

          case RustyJson.decode(text) do
            {:ok, value} ->
              case RustyJson.get(text, pointer) do
                {:ok, items} when is_list(items) ->
                  got == items ++ [{:envelope, emptied(value, RustyJson.Pointer.parse!(pointer))}]

                {:ok, _} ->
                  got == [{:path_error, :not_an_array}]

                {:error, %PathError{}} ->
                  got == [{:path_error, :missing}]
              end

            {:error, e} ->
              match?({:error, _}, List.last(got)) and elem(List.last(got), 1) == e.position
          end
        end
      )
    )
  end

  defp run_at(chunks, pointer) do
    run(JStream.decode_array(chunks, at: pointer, envelope: true))
    |> Enum.map(fn
      {:error, %DecodeError{position: p}} -> {:error, p}
      v -> v
    end)
  rescue
    e in PathError -> [{:path_error, e.reason}]
  end

  test "one-byte chunks and iodata chunks give the same items and envelope" do
    json =
      ~s({"meta": {"total": 2, "s": "é\\u00e9\\"]"}, "data": [{"id": 1}, [2, "x]"]], "next": "b"})

    expected = [%{"id" => 1}, [2, "x]"], {:envelope, %{RustyJson.decode!(json) | "data" => []}}]

    assert JStream.decode_array(json |> String.codepoints(), at: "/data", envelope: true)
           |> Enum.to_list() == expected

    bytes = for <<b <- json>>, do: <<b>>
    assert JStream.decode_array(bytes, at: "/data", envelope: true) |> Enum.to_list() == expected

    assert JStream.decode_array([[json]], %{at: "/data", envelope: true}) |> Enum.to_list() ==
             expected

    assert JStream.decode_array([json], at: "/data") |> Enum.to_list() == Enum.drop(expected, -1)
  end

  test "decode options apply to the items and the envelope; limits hold in the envelope" do
    json = ~s({"meta": {"total": 2}, "data": [{"id": 1}]})

    assert JStream.decode_array([json], at: "/data", envelope: true, keys: :atoms)
           |> Enum.to_list() ==
             [%{id: 1}, {:envelope, %{meta: %{total: 2}, data: []}}]

    deep = ~s({"meta": [[[1]]], "data": [1]})

    assert_raise DecodeError, fn ->
      JStream.decode_array([deep], at: "/data", max_depth: 3) |> Enum.to_list()
    end

    assert JStream.decode_array([deep], at: "/data", max_depth: 4) |> Enum.to_list() == [1]
  end

  test "errors in the envelope: before the items, after them, at the end" do
    before = ~s({"meta": tru, "data": [1]})

    assert [{:error, %DecodeError{position: 9, line: 1}}] =
             run(JStream.decode_array([before], at: "/data"))

    assert RustyJson.decode(before) |> elem(1) |> Map.get(:position) == 9

    after_ = ~s({"data": [1, 2],\n "meta": 1e})

    assert [1, 2, {:error, %DecodeError{position: 28, line: 2}}] =
             run(JStream.decode_array([after_], at: "/data"))

    cut = ~s({"data": [1, 2])

    assert [1, 2, {:error, %DecodeError{position: 15} = e}] =
             run(JStream.decode_array([cut], at: "/data"))

    assert Exception.message(e) == "unexpected end of input at position 15 (line 1)"

    escape = ~s({"s": "\\u12x4", "data": []})

    assert [{:error, %DecodeError{position: 7} = e}] =
             run(JStream.decode_array([escape], at: "/data"))

    assert Exception.message(e) == ~S[unexpected sequence at position 7 (line 1): "\\u12x4"]
  end

  test "a token that never ends, in the envelope or as an item, fails at max_bytes after reading little of it" do
    max = 1_000_000

    # The head, the byte repeated after it, and where the token too long starts.
    for {head, fill, at, items} <- [
          # Before the array: a string, a key, numbers, a literal, in a container around it.
          {~s({"b":"), "a", 5, []},
          {~s({"), "k", 1, []},
          {~s({"b":1), "2", 5, []},
          {~s({"b":-0.5e), "7", 5, []},
          {~s({"b":tru), "e", 5, []},
          {~s({"m":{"x":[1,"), "a", 13, []},
          # After it.
          {~s({"a":[1,2],"z":"), "a", 15, [1, 2]},
          {~s({"a":[1,2],"), "k", 11, [1, 2]},
          {~s({"a":[1,2],"z":[3), "4", 16, [1, 2]},
          # An item of it.
          {~s({"a":[1,"), "a", 8, [1]},
          {~s({"a":[1,2), "3", 8, [1]},
          {~s({"a":[{"k":"), "a", 6, []}
        ],
        envelope <- [false, true] do
      {chunks, counter} = endless(head, fill)
      result = run(JStream.decode_array(chunks, at: "/a", max_bytes: max, envelope: envelope))
      assert [{:error, %DecodeError{limit: ^max} = e} | values] = Enum.reverse(result), head
      assert Enum.reverse(values) == items
      # (An envelope kept may be the first thing over the limit, at 0.)
      assert e.position in [at, if(envelope, do: 0)], head
      assert Exception.message(e) =~ "longer than the max_bytes limit of 1000000 bytes"
      # The head and the first 1 MiB, which holds more than max_bytes.
      assert pulled(counter) == 2, head
    end

    # Within the limit, long tokens of the envelope are no error.
    long = String.duplicate("x", 100_000)
    doc = ~s({"#{long}": "#{long}", "a": [1], "n": 1.#{long |> String.replace("x", "5")}})
    chunks = pieces(doc, Enum.to_list(0..byte_size(doc)//4096))
    assert JStream.decode_array(chunks, at: "/a", max_bytes: 100_002) |> Enum.to_list() == [1]

    assert [{:error, %DecodeError{limit: 100_001, position: 1}}] =
             run(JStream.decode_array(chunks, at: "/a", max_bytes: 100_001))
  end

  test "a missing path or a value that is no array raises PathError after the stream is read" do
    json = ~s({"data": {"id": 1}, "list": [1]})

    assert_raise PathError, ~s(no value at the JSON Pointer "/items"), fn ->
      JStream.decode_array([json], at: "/items") |> Enum.to_list()
    end

    assert_raise PathError, ~s(the value at the JSON Pointer "/data" is not an array), fn ->
      JStream.decode_array([json], at: "/data") |> Enum.to_list()
    end

    # The first of repeated keys, as decode/2 keeps.
    assert JStream.decode_array([~s({"l": [1], "l": [2]})], at: "/l") |> Enum.to_list() == [1]
  end

  test "bad options raise ArgumentError when the stream is made" do
    assert_raise ArgumentError, fn -> JStream.decode_array([], at: "data") end
    assert_raise ArgumentError, fn -> JStream.decode_array([], at: :data) end

    assert_raise ArgumentError, ~r/:envelope/, fn ->
      JStream.decode_array([], at: "/a", envelope: 1)
    end
  end

  test "at: names members as the document writes them, whatever keys: maps them to" do
    json = ~s({"Data": [{"K": 1}], "data": [{"K": 2}], "Meta": {"Items": [3, 4]}})
    down = &String.downcase/1

    assert run(JStream.decode_array([json], at: "/data", keys: down)) == [%{"k" => 2}]
    assert run(JStream.decode_array([json], at: "/Data", keys: down)) == [%{"k" => 1}]
    assert run(JStream.decode_array([json], at: "/Meta/Items", keys: down)) == [3, 4]

    assert [{:error, %PathError{reason: :missing}}] =
             run_path(JStream.decode_array([json], at: "/meta/items", keys: down))

    assert run(JStream.decode_array([json], at: "/Meta/Items", keys: :atoms)) == [3, 4]
  end

  defp run_path(stream) do
    run(stream)
  rescue
    e in PathError -> [{:error, e}]
  end
end
