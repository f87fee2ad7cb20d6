defmodule RustyJson.StreamTest do
  # RustyJson.Stream: decoding streams cut anywhere gives what RustyJson.decode/2 gives for each item (values and
  # errors, with absolute positions and lines), lazily; encoding gives JSON Lines and well-filled array chunks.
  use ExUnit.Case, async: true

  alias RustyJson.DecodeError
  alias RustyJson.Stream, as: JStream

  import RustyJson.Test.StreamRun

  doctest RustyJson.Stream

  defp bytes(binary), do: for(<<b <- binary>>, do: <<b>>)

  defp strip(results) do
    Enum.map(results, fn
      {:error, %DecodeError{} = e} -> {:error, e.position, e.line, e.token, Exception.message(e)}
      v -> v
    end)
  end

  # What decode/2 gives for each line in turn, up to the first error (at its absolute position and line).
  defp expected_lines(lines, opts) do
    lines
    |> Enum.with_index(1)
    |> Enum.reduce_while({[], 0}, fn {line, number}, {acc, offset} ->
      case RustyJson.decode(line, opts) do
        {:ok, v} ->
          {:cont, {[v | acc], offset + byte_size(line) + 1}}

        {:error, e} ->
          message =
            Exception.message(%{e | position: offset + e.position, line: number, offset: offset})

          {:halt, {[{:error, offset + e.position, number, message} | acc], nil}}
      end
    end)
    |> elem(0)
    |> Enum.reverse()
  end

  # Every single cut point, every pair of cut points (for short inputs) and 1-byte pieces give the same result.
  defp every_chunking(input, fun) do
    whole = strip(run(fun.([input])))
    n = byte_size(input)

    for a <- 0..n do
      assert strip(run(fun.(pieces(input, [a])))) == whole, "cut at #{a} of #{inspect(input)}"

      if n <= 40 do
        for b <- a..n,
            do: assert(strip(run(fun.(pieces(input, [a, b])))) == whole, "cuts #{a},#{b}")
      end
    end

    assert strip(run(fun.(bytes(input)))) == whole
    whole
  end

  describe "decode_documents/2" do
    test "JSON Lines, CRLF, blank lines and concatenated documents, cut anywhere" do
      input =
        ~s({"a":[1,"]\\"}"],"é😀":"\\u00e9\\ud83d\\ude00"}\r\n\n  1 -2.5e3\ttrue"x\\\\"[][{}]\nnull\n)

      assert every_chunking(input, &JStream.decode_documents/1) == [
               %{"a" => [1, "]\"}"], "é😀" => "é😀"},
               1,
               -2500.0,
               true,
               "x\\",
               [],
               [%{}],
               nil
             ]
    end

    test "an empty stream, blank lines only, and empty chunks" do
      assert run(JStream.decode_documents([])) == []
      assert run(JStream.decode_documents(["", "\n\r\n", "", " "])) == []
      assert run(JStream.decode_documents(["", "[1", "", "]", ""])) == [[1]]
    end

    test "errors: absolute position, line, token and message" do
      cases = [
        {["1\n2\n", "[3,]\n"], [1, 2], 7, 3,
         "unexpected byte at position 7 (line 3): 0x5D (\"]\")"},
        {["{\"a\":1}\n", "}"], [%{"a" => 1}], 8, 2,
         "unexpected byte at position 8 (line 2): 0x7D (\"}\")"},
        {["[1,\n2,\n", "{\"a\"\n:x}]"], [], 13, 4,
         "unexpected byte at position 13 (line 4): 0x78 (\"x\")"},
        {["\"abc"], [], 4, 1, "unexpected end of input at position 4 (line 1)"},
        {["1\n\n[1,"], [1], 6, 3, "unexpected end of input at position 6 (line 3)"},
        {["1\n1", "23456789012345678901234567890e99999"], [1], 2, 2,
         "unexpected sequence at position 2 (line 2): \"123456789012345678901234567890e99999\""}
      ]

      for {chunks, values, position, line, message} <- cases do
        input = IO.iodata_to_binary(chunks)

        assert [_ | _] = results = every_chunking(input, &JStream.decode_documents/1)
        assert [{:error, ^position, ^line, _token, ^message}] = results -- values
        assert Enum.drop(results, -1) == values
      end
    end

    test "errors as RustyJson.DecodeError structs, raised after the values before them" do
      stream = JStream.decode_documents(["[1]\n[2]\n{", "\"a\" 1}\n[3]"])
      assert Enum.take(stream, 2) == [[1], [2]]

      error = assert_raise DecodeError, fn -> Enum.to_list(stream) end
      assert %DecodeError{position: 13, line: 3, data: ~s({"a" 1}), offset: 8, token: nil} = error
    end

    test "every decode option applies to every item" do
      input = ~s({"a":1.5,"a":2}\n{"b":{"c":[]}}\n)
      decimals = Code.ensure_loaded?(Decimal)

      assert run(JStream.decode_documents([input], keys: :atoms)) == [%{a: 1.5}, %{b: %{c: []}}]
      assert run(JStream.decode_documents([input], duplicate_keys: :last)) |> hd() == %{"a" => 2}

      assert [{:error, %DecodeError{position: 9, token: ~s("a"), line: 1}}] =
               run(JStream.decode_documents([input], duplicate_keys: :error))

      assert [%{"a" => 1.5}, {:error, %DecodeError{position: 26, line: 2}}] =
               run(JStream.decode_documents(bytes(input), max_depth: 2))

      assert [%RustyJson.OrderedObject{} | _] =
               run(JStream.decode_documents([input], objects: :ordered_objects))

      assert run(JStream.decode_documents([input], keys: &String.upcase/1)) ==
               [%{"A" => 1.5}, %{"B" => %{"C" => []}}]

      if decimals,
        do:
          assert(
            hd(run(JStream.decode_documents([input], floats: :decimals)))["a"]
            |> is_struct()
          )

      assert_raise ArgumentError, fn ->
        Enum.to_list(JStream.decode_documents(["1"], keys: :nope))
      end
    end

    # Items wholly inside a chunk are decoded together, in one NIF call; what each gives (value or error) is
    # what decode/2 gives for it alone, with every option, whatever sits before and after it.
    test "items decoded together agree with decode/2 item by item, options and errors alike" do
      large = ~s({"big":"#{String.duplicate("z", 40_000)}","n":1})

      lines = [
        ~s({"id":1,"tags":["a","b"],"v":1.25}),
        ~s({"id":2,"tags":[],"v":-0.5e3}),
        ~s({"id":3,"id":4,"tags":["\\u00e9\\n"],"v":12345678901234567890}),
        large,
        ~s([[[[1]]]]),
        ~s({"rusty_json_no_such_atom_#{System.unique_integer([:positive])}":1}),
        ~s("text"),
        ~s({"id":5,"tags":["c"],"v":true})
      ]

      options = [
        [],
        [keys: :atoms],
        [keys: :atoms!],
        [keys: :copy],
        [keys: :intern],
        [strings: :copy],
        [objects: :ordered_objects],
        [duplicate_keys: :last],
        [duplicate_keys: :error],
        [max_depth: 3],
        [decoding_integer_digit_limit: 5],
        [keys: :intern, duplicate_keys: :error, strings: :copy]
      ]

      for opts <- options, bad <- [nil, 1, 6] do
        lines = if bad, do: List.insert_at(lines, bad, ~s({"id":9,"tags":[1,,2]})), else: lines
        text = Enum.join(lines, "\n")
        expected = expected_lines(lines, opts)

        for chunks <- [[text], pieces(text, [100, 40_050, 40_100])] do
          got =
            Enum.map(run(JStream.decode_documents(chunks, opts)), fn
              {:error, %DecodeError{} = e} -> {:error, e.position, e.line, Exception.message(e)}
              v -> v
            end)

          assert got == expected, "options #{inspect(opts)}, bad line at #{inspect(bad)}"
        end
      end
    end

    test "iodata chunks" do
      assert run(JStream.decode_documents([["[1", [?,, "2"]], ~c"]\n3"])) == [[1, 2], 3]
    end

    test "a string of 256 KB in 1-byte chunks and in 1000-byte chunks is assembled once" do
      big = String.duplicate("aé\\n", 64_000)
      json = ~s(["#{big}"]\n1)
      expected = RustyJson.decode!(~s(["#{big}"]))

      assert run(JStream.decode_documents(bytes(json))) == [expected, 1]

      thousand = for <<piece::binary-size(1000) <- json>>, do: piece
      rest = binary_part(json, 1000 * length(thousand), rem(byte_size(json), 1000))
      assert run(JStream.decode_documents(thousand ++ [rest])) == [expected, 1]
    end

    test "records of one chunk share their keys (equal values, one term), unless keys: :copy" do
      chunk = ~s({"level":"info","n":1}\n{"level":"warn","n":2}\n)
      # (Enum.to_list, not `run/1`: ETS copies terms, and the copies share nothing.)
      [a, b] = Enum.to_list(JStream.decode_documents([chunk]))
      assert a == %{"level" => "info", "n" => 1} and b == %{"level" => "warn", "n" => 2}
      assert :erts_debug.same(hd(Map.keys(a)), hd(Map.keys(b)))

      [c, d] = Enum.to_list(JStream.decode_documents([chunk], keys: :copy))
      refute :erts_debug.same(hd(Map.keys(c)), hd(Map.keys(d)))
    end

    test "items inside a chunk are decoded from sub-binaries of it" do
      long = String.duplicate("x", 10_000)
      chunk = ~s(["#{long}"]\n["#{long}"]\n)
      [[a], [b]] = run(JStream.decode_documents([chunk]))
      assert a == long and b == long
      assert :binary.referenced_byte_size(a) == byte_size(chunk)
      assert :binary.referenced_byte_size(b) == byte_size(chunk)
    end

    test "chunks larger than one NIF call (64 KiB) with items across the slices" do
      line = ~s({"k":"#{String.duplicate("v", 1000)}","n":[1,2,3]}\n)
      input = String.duplicate(line, 1_000)
      values = run(JStream.decode_documents([input, input]))
      assert length(values) == 2_000
      assert Enum.uniq(values) == [RustyJson.decode!(line)]

      bad = input <> "]"

      assert {:error, %DecodeError{position: p, line: 1001}} =
               List.last(run(JStream.decode_documents([bad])))

      assert p == byte_size(input)
    end
  end

  # The NIF's batch decode of items already delimited (the items a chunk's call left after its time ran out).
  describe "the consuming process's minimum heap" do
    defp min_heap, do: elem(Process.info(self(), :min_heap_size), 1)

    test "is at least 65,536 words while a stream decodes, and the process's own again after" do
      chunks = ["1\n2\n", "3\n"]
      before = min_heap()
      seen = chunks |> JStream.decode_documents() |> Enum.map(fn _ -> min_heap() end)
      assert Enum.all?(seen, &(&1 >= 65_536)) and before < 65_536
      assert min_heap() == before

      # Halted early, raising, and one stream inside another.
      assert ["[1,2,3]"] |> JStream.decode_array() |> Enum.take(1) == [1]
      assert min_heap() == before

      assert_raise RustyJson.DecodeError, fn ->
        Enum.to_list(JStream.decode_documents(["1 ]"]))
      end

      assert min_heap() == before

      nested =
        for x <- JStream.decode_documents(["1 2"]),
            y <- JStream.decode_documents(["3"]),
            do: {x, y, min_heap()}

      assert [{1, 3, a}, {2, 3, b}] = nested
      assert a >= 65_536 and b >= 65_536
      assert min_heap() == before
    end

    test "a larger setting of the process is kept" do
      parent = self()

      spawn_link(fn ->
        Process.flag(:min_heap_size, 200_000)
        during = JStream.decode_documents(["1"]) |> Enum.map(fn _ -> min_heap() end)
        send(parent, {:heaps, during, min_heap()})
      end)

      assert_receive {:heaps, [during], after_stream}
      assert during >= 200_000 and after_stream == during
    end
  end

  describe "Native.decode_items/4" do
    alias RustyJson.Native

    defp spans_of(chunk) do
      {spans, [], nil, nil} = Native.split_chunk(Native.splitter_new(:documents), chunk, nil)
      for <<start::64, stop::64, _line::64 <- spans>>, do: {start, stop}
    end

    test "decodes every item, in order, and leaves nothing" do
      chunk = ~s({"a":[1,2.5,"x"]}\n"s"\n-7\n[true,null]\n)
      {spans, [], nil, nil} = Native.split_chunk(Native.splitter_new(:documents), chunk, nil)
      assert {values, ""} = Native.decode_items(chunk, 0, spans, 0)
      assert values == [%{"a" => [1, 2.5, "x"]}, "s", -7, [true, nil]]
      assert {[%{a: [1, 2.5, "x"]}, _, _, _], ""} = Native.decode_items(chunk, 0, spans, 1)
    end

    test "leaves the spans from an invalid item, or one too large for one call, on" do
      big = ~s(") <> String.duplicate("b", 40_000) <> ~s(")

      for {lines, left_at} <- [
            {["1", "[2,]", "3"], 1},
            {["1", big, "3"], 1},
            {["1", "2", "tru"], 2}
          ] do
        chunk = Enum.join(lines, "\n") <> "\n"
        {spans, [], nil, nil} = Native.split_chunk(Native.splitter_new(:documents), chunk, nil)
        {values, rest} = Native.decode_items(chunk, 0, spans, 0)
        assert length(values) == left_at
        {start, _} = Enum.at(spans_of(chunk), left_at)
        assert <<^start::64, _::binary>> = rest
        assert byte_size(rest) == 24 * (length(lines) - left_at)
      end
    end

    test "items of a later slice: offsets are the stream's" do
      chunk = "[1] [2]"

      assert {[[1], [2]], ""} =
               Native.decode_items(
                 chunk,
                 1000,
                 <<1000::64, 1003::64, 1::64, 1004::64, 1007::64, 1::64>>,
                 0
               )

      # An item before the slice (it began in an earlier chunk) is left to Elixir.
      assert {[], <<999::64, _::binary>>} =
               Native.decode_items(chunk, 1000, <<999::64, 1003::64, 1::64>>, 0)
    end
  end

  describe "decode_array/2" do
    test "items of one array, cut anywhere" do
      input = ~s( [ 1 ,"a,]" ,{"b":[2,3]}\n,[],-0.5e-3 , null ] \n)

      assert every_chunking(input, &JStream.decode_array/1) ==
               [1, "a,]", %{"b" => [2, 3]}, [], -0.0005, nil]

      assert every_chunking("[]", &JStream.decode_array/1) == []
    end

    test "structural errors are the positions decode/2 reports for the whole array" do
      for input <- [
            "",
            "  ",
            "{}",
            "1",
            "[",
            "[1",
            "[1,",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[1]\n]",
            "[1] x",
            "[1][2]",
            "[1:2]",
            "[1,\n}",
            "[1,{\"a\":[",
            "[1,2.",
            "[tru]",
            "[1,[2}]"
          ] do
        results = every_chunking(input, &JStream.decode_array/1)
        # A valid document that is no array fails at its first byte.
        p =
          case RustyJson.decode(input) do
            {:error, %DecodeError{position: p}} -> p
            {:ok, _} -> 0
          end

        assert {:error, ^p, _line, _, _} = List.last(results), inspect(input)
      end
    end

    test "a number cut short fails at the byte that ended it, as in decode/2" do
      for input <- ["[1.]", "[2,-]", "[3e ,4]", "[1.5,\n2.\n]", "[0,-1e+]"] do
        {:error, %DecodeError{position: p} = whole} = RustyJson.decode(input)
        line = 1 + length(:binary.matches(binary_part(input, 0, p), "\n"))

        message =
          String.replace(
            Exception.message(whole),
            "position #{p}",
            "position #{p} (line #{line})"
          )

        assert [{:error, ^p, ^line, nil, ^message}] =
                 every_chunking(input, &JStream.decode_array/1) -- [1, 2, 0, 1.5]
      end

      {:error, whole} = RustyJson.decode("1.\n")

      assert [1, {:error, 4, 2, nil, message}] =
               every_chunking("1\n1.\n2", &JStream.decode_documents/1)

      assert message ==
               String.replace(
                 Exception.message(%{whole | position: 4, data: "1\n1.\n2"}),
                 "position 4",
                 "position 4 (line 2)"
               )
    end

    test "a large array is consumed lazily: an endless array, taken from" do
      chunks =
        Stream.concat(
          ["["],
          Stream.map(Stream.iterate(0, &(&1 + 1)), fn i ->
            Enum.map_join((i * 100)..(i * 100 + 99), ",", &~s({"i":#{&1}})) <> ","
          end)
        )

      assert chunks
             |> JStream.decode_array()
             |> Stream.drop(999_990)
             |> Enum.take(3) == [%{"i" => 999_990}, %{"i" => 999_991}, %{"i" => 999_992}]
    end

    test "an item or document that never ends fails at max_bytes after reading little of it" do
      max = 1_000_000

      # The head, the byte repeated after it, where the item too long starts, and the values before it.
      for {decode, head, fill, at, before} <- [
            {&JStream.decode_array/2, ~s(["), "a", 1, []},
            {&JStream.decode_array/2, ~s([1,2), "3", 3, [1]},
            {&JStream.decode_array/2, ~s([{"k":[1,), "[", 1, []},
            {&JStream.decode_documents/2, ~s("), "a", 0, []},
            {&JStream.decode_documents/2, ~s(1\n-1.5e), "7", 2, [1]},
            {&JStream.decode_documents/2, ~s({"a":1}\n{"), "k", 8, [%{"a" => 1}]}
          ] do
        {chunks, counter} = endless(head, fill)
        result = run(decode.(chunks, max_bytes: max))

        assert [{:error, %DecodeError{limit: ^max, position: ^at} = e} | values] =
                 Enum.reverse(result)

        assert Enum.reverse(values) == before, head
        assert Exception.message(e) =~ "longer than the max_bytes limit of 1000000 bytes"
        # The head and the first 1 MiB, which holds more than max_bytes.
        assert pulled(counter) == 2, head
      end
    end

    test "memory is bounded by the largest item, not by the array" do
      chunks = Stream.concat([["["], Stream.repeatedly(fn -> ~s([1,"two",{"three":3}],) end)])

      {:memory, before} = :erlang.process_info(self(), :memory)
      count = chunks |> JStream.decode_array() |> Stream.take(200_000) |> Enum.count()
      :erlang.garbage_collect()
      {:memory, later} = :erlang.process_info(self(), :memory)
      assert count == 200_000
      assert later - before < 1_000_000
    end
  end

  describe "encode_lines/2 and encode_array/2" do
    @items [%{"a" => [1, 2.5, nil]}, "line\nbreak", [], %{}, 12, true, String.duplicate("é", 100)]

    test "encode_lines: one document per line, decoded back" do
      lines = @items |> JStream.encode_lines() |> Enum.map(&IO.iodata_to_binary/1)
      assert length(lines) == length(@items)

      assert Enum.all?(
               lines,
               &(String.ends_with?(&1, "\n") and length(String.split(&1, "\n")) == 2)
             )

      assert run(JStream.decode_documents(lines)) == @items
      assert run(JStream.decode_documents(bytes(Enum.join(lines)))) == @items
    end

    test "encode_lines: encode options apply; pretty and compress raise" do
      assert [~s({"a":1,"b":2}\n)] ==
               [%{b: 2, a: 1}]
               |> JStream.encode_lines(sort_keys: true)
               |> Enum.map(&IO.iodata_to_binary/1)

      assert_raise ArgumentError, fn -> JStream.encode_lines([1], pretty: true) end
      assert_raise ArgumentError, fn -> JStream.encode_lines([1], compress: :gzip) end
      assert [_] = Enum.to_list(JStream.encode_lines([1], pretty: false))

      assert_raise RustyJson.EncodeError, fn ->
        Enum.to_list(JStream.encode_lines([<<0xFF>>]))
      end
    end

    test "encode_array: the chunks form the array, each about chunk_bytes" do
      items = for i <- 1..20_000, do: %{"id" => i, "name" => "item #{i}"}
      chunks = items |> JStream.encode_array() |> Enum.to_list()
      assert RustyJson.decode!(Enum.join(chunks)) == items
      assert run(JStream.decode_array(chunks)) == items

      {full, [last]} = Enum.split(chunks, -1)
      assert length(full) >= 5
      assert Enum.all?(full, &(byte_size(&1) in 65_536..(65_536 + 40)))
      assert byte_size(last) <= 65_536 + 40

      small = items |> JStream.encode_array(chunk_bytes: 1000) |> Enum.to_list()
      assert Enum.join(small) == Enum.join(chunks)
      assert Enum.all?(Enum.drop(small, -1), &(byte_size(&1) in 1000..1040))
    end

    test "encode_array: empty, one item, options, errors" do
      assert Enum.to_list(JStream.encode_array([])) == ["[]"]
      assert Enum.to_list(JStream.encode_array([[]])) == ["[[]]"]
      assert Enum.to_list(JStream.encode_array(["<"], escape: :html_safe)) == [~s(["\\u003C"])]

      assert RustyJson.decode!(Enum.join(JStream.encode_array([%{a: [1]}], pretty: true))) == [
               %{"a" => [1]}
             ]

      assert_raise ArgumentError, fn -> JStream.encode_array([1], compress: :gzip) end
      assert_raise ArgumentError, fn -> JStream.encode_array([1], chunk_bytes: 0) end
    end

    test "round trips through files" do
      path =
        Path.join(System.tmp_dir!(), "rusty_json_stream_#{System.unique_integer([:positive])}")

      try do
        items = for i <- 1..5_000, do: %{"i" => i, "s" => String.duplicate("ü", rem(i, 50))}
        Enum.into(JStream.encode_lines(items), File.stream!(path))

        assert path |> chunks(4096) |> JStream.decode_documents() |> Enum.to_list() == items

        Enum.into(JStream.encode_array(items, chunk_bytes: 10_000), File.stream!(path))
        assert path |> chunks(777) |> JStream.decode_array() |> Enum.to_list() == items
      after
        File.rm(path)
      end
    end
  end

  # The file in chunks of `bytes`: Elixir 1.16 put the size second and deprecated the modes-first form that
  # 1.14 and 1.15 need.
  defp chunks(path, bytes) do
    if Version.match?(System.version(), ">= 1.16.0"),
      do: File.stream!(path, bytes),
      else: File.stream!(path, [], bytes)
  end
end
