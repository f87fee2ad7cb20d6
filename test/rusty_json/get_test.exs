defmodule RustyJson.GetTest do
  # RustyJson.get/3 gives what decode!/2 then a lookup gives, with the same options, and decode/2's error for an
  # invalid document wherever it is invalid.
  use ExUnit.Case, async: true

  alias RustyJson.{DecodeError, PathError, Pointer}

  @dir Path.expand("../../../shared/data/JSONTestSuite/test_parsing", __DIR__)

  # The value at `pointer` of a decoded document, as RFC 6901 reads it.
  # `key` turns a token into the key the options decode it to.
  defp lookup(value, pointer, key) do
    Enum.reduce_while(Pointer.parse!(pointer), {:ok, value}, fn token, {:ok, v} ->
      case v do
        %RustyJson.OrderedObject{values: pairs} ->
          pair(pairs, key.(token))

        %{} ->
          if Map.has_key?(v, key.(token)),
            do: {:cont, {:ok, v[key.(token)]}},
            else: {:halt, :missing}

        list when is_list(list) ->
          list_item(list, token)

        _ ->
          {:halt, :missing}
      end
    end)
  end

  defp pair(pairs, key) do
    case List.keyfind(pairs, key, 0) do
      {_, v} -> {:cont, {:ok, v}}
      nil -> {:halt, :missing}
    end
  end

  defp list_item(list, token) do
    with true <- token =~ ~r/^(0|[1-9][0-9]*)$/,
         {:ok, item} <- Enum.fetch(list, String.to_integer(token)) do
      {:cont, {:ok, item}}
    else
      _ -> {:halt, :missing}
    end
  end

  defp expected(json, pointer, opts \\ [], key \\ & &1) do
    case RustyJson.decode(json, opts) do
      {:ok, value} ->
        case lookup(value, pointer, key) do
          {:ok, v} -> {:ok, v}
          :missing -> {:error, %PathError{pointer: pointer, reason: :missing}}
        end

      error ->
        error
    end
  end

  @doc_json ~s( {"data": [{"id": 1, "tags": ["a", "b"]}, {"id": 2.5e3, "x": null}],
    "meta": {"total": 2, "a/b": true, "m~n": "é\\u00e9", "": [0, -1, {"": {}}]}, "meta": {"total": 3}} )

  @pointers [
    "",
    "/data",
    "/data/0",
    "/data/1/id",
    "/data/0/tags/1",
    "/meta/total",
    "/meta/a~1b",
    "/meta/m~0n",
    "/meta/",
    "/meta//2/",
    "/data/2",
    "/data/-",
    "/data/01",
    "/missing",
    "/meta/total/x",
    "/data/0/id/0"
  ]

  test "every pointer gives decode!/1's value there, one at a time and all at once" do
    for pointer <- @pointers do
      assert RustyJson.get(@doc_json, pointer) == expected(@doc_json, pointer), pointer
    end

    present = Enum.filter(@pointers, &match?({:ok, _}, expected(@doc_json, &1)))

    assert RustyJson.get(@doc_json, present) ==
             {:ok, Enum.map(present, &elem(expected(@doc_json, &1), 1))}

    assert RustyJson.get(@doc_json, ["/data/0/id", "/nope", "/data/9"]) ==
             {:error, %PathError{pointer: "/nope", reason: :missing}}

    assert RustyJson.get(@doc_json, ["/data/0/id", "/nope"], default: 0) == {:ok, [1, 0]}
    assert RustyJson.get(@doc_json, [], %{default: 0}) == {:ok, []}
  end

  test "repeated keys: the first wins, as in decode/2, or the last with duplicate_keys: :last" do
    json = ~s({"a": {"b": 1}, "a": {"c": 2, "b": 3}})

    for opts <- [[], [duplicate_keys: :last]], pointer <- ["/a", "/a/b", "/a/c"] do
      assert RustyJson.get(json, pointer, opts) == expected(json, pointer, opts)
    end

    assert RustyJson.get(json, "/a/c") == {:error, %PathError{pointer: "/a/c", reason: :missing}}
    assert RustyJson.get(json, "/a/b", duplicate_keys: :last) == {:ok, 3}

    assert {:error, %DecodeError{position: 16, token: ~s("a")}} =
             RustyJson.get(json, "/a/b", duplicate_keys: :error)

    # Inside the value returned, at its position in the document.
    assert {:error, %DecodeError{position: 15, token: ~s("x")}} =
             RustyJson.get(~s({"v": {"x": 1, "x": 2}}), "/v", duplicate_keys: :error)
  end

  test "repeated keys: decode!/2 then get_in/2's value, for every duplicate_keys: mode, maps or ordered objects" do
    # Ordered objects keep every pair whatever the mode (but :error), and Access fetches the first.
    cases = [
      {~s({"a": 1, "a": 2}), ["/a"]},
      {~s({"a": {"b": 1}, "a": {"c": 2, "b": 3}}), ["/a", "/a/b", "/a/c"]},
      {~s({"x": {"a": [1], "a": [2]}, "y": 0}), ["/x", "/x/a", "/y"]},
      {~s([{"k": {"k": 1, "k": 2}}]), ["/0/k/k"]}
    ]

    for {json, pointers} <- cases,
        objects <- [:maps, :ordered_objects],
        duplicates <- [:first, :last, :error],
        pointer <- pointers do
      opts = [objects: objects, duplicate_keys: duplicates]
      context = inspect({json, pointer, opts})

      case RustyJson.decode(json, opts) do
        {:ok, decoded} ->
          expected = get_in(decoded, access_path(pointer)) || :missing

          assert RustyJson.get(json, pointer, [default: :missing] ++ opts) == {:ok, expected},
                 context

        # A repeat off the path is not looked for (get's @doc).
        {:error, %DecodeError{}} when pointer == "/y" ->
          assert RustyJson.get(json, pointer, opts) == {:ok, 0}

        {:error, %DecodeError{} = error} ->
          assert duplicates == :error
          assert RustyJson.get(json, pointer, opts) == {:error, error}, context
      end
    end

    assert RustyJson.get(~s({"a": 1, "a": 2}), "/a",
             objects: :ordered_objects,
             duplicate_keys: :last
           ) ==
             {:ok, 1}
  end

  # A pointer as get_in/2's keys (array indexes as Access.at/1).
  defp access_path(pointer) do
    for token <- Pointer.parse!(pointer) do
      if token =~ ~r/^[0-9]+$/, do: Access.at(String.to_integer(token)), else: token
    end
  end

  test "decode options apply to the values" do
    json = ~s({"user": {"name": "Ada", "score": 1.5, "list": [{"k": 1}]}})

    for {opts, key} <- [
          {[keys: :atoms], &String.to_atom/1},
          {[keys: &String.upcase/1], &String.upcase/1},
          {[objects: :ordered_objects], & &1},
          {[strings: :copy], & &1},
          {%{keys: :copy}, & &1}
        ],
        pointer <- ["/user", "/user/score", "/user/list/0"] do
      assert RustyJson.get(json, pointer, opts) == expected(json, pointer, opts, key),
             "#{inspect(opts)} #{pointer}"
    end

    assert_raise ArgumentError, ~r/:keys/, fn -> RustyJson.get(json, "/user", keys: :nope) end
    assert_raise ArgumentError, fn -> RustyJson.get(json, "user") end
  end

  test "pointers name members as the document writes them, whatever keys: maps them to" do
    json = ~s({"A": 1, "a": 2, "B": {"x": 3, "Y": {"z": [4]}}})
    down = &String.downcase/1

    # A collision of mapped keys: decode!/2 keeps the first ("A" -> "a"), the pointer still names "a" itself.
    assert RustyJson.decode!(json, keys: down)["a"] == 1
    assert RustyJson.get(json, "/a", keys: down) == {:ok, 2}
    assert RustyJson.get(json, "/A", keys: down) == {:ok, 1}
    # A renamed member on the path: named as written; the value's own keys are mapped.
    assert RustyJson.get(json, "/B/x", keys: down) == {:ok, 3}
    assert RustyJson.get(json, "/B", keys: down) == {:ok, %{"x" => 3, "y" => %{"z" => [4]}}}
    assert RustyJson.get(json, "/B/Y/z/0", keys: down) == {:ok, 4}

    assert {:error, %RustyJson.PathError{reason: :missing}} =
             RustyJson.get(json, "/b/x", keys: down)

    assert {:error, %RustyJson.PathError{reason: :missing}} =
             RustyJson.get(json, "/B/y", keys: down)

    # With duplicate_keys: :error, a repeat on the path is one as written (none here); one inside a value
    # returned is one as decoded.
    assert RustyJson.get(json, "/B/x", keys: down, duplicate_keys: :error) == {:ok, 3}

    assert {:error, %RustyJson.DecodeError{}} =
             RustyJson.get(json, "", keys: down, duplicate_keys: :error)

    # Atom keys: the tokens are the members' names; the values' keys are atoms.
    atoms = ~s({"user_name_bit_offset_test": {"id": 1}, "list": [{"k": 2}]})
    assert RustyJson.get(atoms, "/user_name_bit_offset_test", keys: :atoms) == {:ok, %{id: 1}}
    assert RustyJson.get(atoms, "/user_name_bit_offset_test/id", keys: :atoms!) == {:ok, 1}
    assert RustyJson.get(atoms, "/list/0", keys: :atoms!) == {:ok, %{k: 2}}
    assert {:error, %RustyJson.PathError{}} = RustyJson.get(atoms, "/list/k", keys: :atoms)

    # :atoms! fails only for a key of a value returned that names no atom, not for the path's keys.
    fresh = ~s({"path_key_never_an_atom_#{System.unique_integer([:positive])}": {"v": 1}})
    [pointer] = for {key, _} <- RustyJson.decode!(fresh), do: "/" <> key
    assert RustyJson.get(fresh, pointer <> "/v", keys: :atoms!) == {:ok, 1}

    assert_raise ArgumentError, fn ->
      RustyJson.get(~s({"a": {"never_an_atom_#{System.unique_integer([:positive])}": 1}}), "/a",
        keys: :atoms!
      )
    end
  end

  test "limits hold on the whole document, as in decode/2" do
    deep = ~s({"a": 1, "b": [[[[1]]]]})
    assert RustyJson.get(deep, "/a", max_depth: 3) == RustyJson.decode(deep, max_depth: 3)
    assert RustyJson.get(deep, "/a", max_depth: 5) == {:ok, 1}
    long = ~s({"a": 1, "b": 12345})
    assert {:error, %DecodeError{}} = RustyJson.get(long, "/a", decoding_integer_digit_limit: 4)

    assert RustyJson.get(long, "/a", decoding_integer_digit_limit: 4) ==
             RustyJson.decode(long, decoding_integer_digit_limit: 4)

    assert RustyJson.get(~s([1e400, 2]), "/1") == RustyJson.decode(~s([1e400, 2]))
  end

  test "iodata input, and get!/3 raising" do
    assert RustyJson.get([~s({"a":), [" [1, ", "2]}"]], "/a/1") == {:ok, 2}
    assert RustyJson.get!(@doc_json, "/meta/total") == 2

    assert_raise PathError, ~s(no value at the JSON Pointer "/x"), fn ->
      RustyJson.get!(@doc_json, "/x")
    end

    assert_raise DecodeError, fn -> RustyJson.get!("[1,]", "/0") end
  end

  test "JSONTestSuite: every file's verdict, error position and message are decode/2's" do
    files = File.ls!(@dir)
    assert length(files) > 300

    for name <- files do
      json = File.read!(Path.join(@dir, name))

      for pointer <- ["", "/0", "/a"] do
        got = RustyJson.get(json, pointer)
        assert got == expected(json, pointer), "#{name} #{pointer}"

        with {:error, %DecodeError{} = e} <- got do
          assert Exception.message(e) == Exception.message(elem(RustyJson.decode(json), 1))
        end
      end
    end
  end

  test "random corruptions of a document: decode/2's verdict, position and token" do
    :rand.seed(:exsss, {7, 8, 9})

    specials =
      ~c"\"\\{}[]:,.-+eE0123456789 \t\n" ++ [0, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xED, 0xF0, 0xFF]

    for _ <- 1..3000 do
      json = corrupt(@doc_json, specials)

      for pointer <- ["/meta/total", "/data/0"] do
        assert RustyJson.get(json, pointer) == expected(json, pointer), inspect(json)
      end
    end
  end

  defp corrupt(json, specials) do
    Enum.reduce(1..:rand.uniform(3), json, fn _, json ->
      at = :rand.uniform(max(byte_size(json), 1)) - 1
      {before, rest} = :erlang.split_binary(json, at)

      case {:rand.uniform(3), rest} do
        {_, ""} -> json
        {1, <<_, after_::binary>>} -> before <> <<Enum.random(specials)>> <> after_
        {2, <<_, after_::binary>>} -> before <> after_
        {3, _} -> before
      end
    end)
  end

  test "large documents: the same values, walked in slices" do
    items = for i <- 1..50_000, do: %{"id" => i, "name" => "item #{i} é", "tags" => ["x", "y\n"]}
    json = RustyJson.encode!(%{"data" => items, "meta" => %{"total" => 50_000}})
    assert byte_size(json) > 2_000_000

    assert RustyJson.get(json, ["/meta/total", "/data/49999/name"]) ==
             {:ok, [50_000, "item 50000 é"]}

    bad = binary_part(json, 0, byte_size(json) - 1)
    assert RustyJson.get(bad, "/meta/total") == RustyJson.decode(bad)
  end
end
