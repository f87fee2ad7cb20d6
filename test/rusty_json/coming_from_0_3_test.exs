defmodule RustyJson.ComingFrom03Test do
  # What users of the published RustyJson 0.3.10 call keeps working, with 0.3.10's results as the expected
  # values (README, "Coming from RustyJson 0.3"), while every Jason default stays as it is.
  use ExUnit.Case, async: true

  alias RustyJson.{DecodeError, Fragment, OrderedObject}
  alias RustyJson.Test.{Derived, Plain, StreamRun}

  @uri URI.parse("https://a.example/x?y=1")

  describe "pretty:" do
    test "a number of spaces, a string, or [indent: n], and the Formatter's indent: n" do
      assert RustyJson.encode!(%{a: [1]}, pretty: 4) == "{\n    \"a\": [\n        1\n    ]\n}"
      assert RustyJson.encode!(%{a: [1]}, pretty: "\t") == "{\n\t\"a\": [\n\t\t1\n\t]\n}"

      assert RustyJson.encode!(%{a: [1]}, pretty: [indent: 4]) ==
               "{\n    \"a\": [\n        1\n    ]\n}"

      # Only JSON whitespace: an indent such as "-->" would make the output something other than JSON (#54).
      assert_raise ArgumentError, ~r/expected JSON whitespace only/, fn ->
        RustyJson.encode!([1, 2], pretty: [indent: "-->"])
      end

      assert RustyJson.encode!(%{a: 1}, pretty: [indent: 2, after_colon: ""]) == "{\n  \"a\":1\n}"
      assert RustyJson.encode!([1], pretty: 0) == "[\n1\n]"

      assert RustyJson.Formatter.pretty_print(~s({"a":[1]}), indent: 4) ==
               "{\n    \"a\": [\n        1\n    ]\n}"

      assert RustyJson.Formatter.pretty_print(~s([{"a":1}]), indent: "\t") ==
               "[\n\t{\n\t\t\"a\": 1\n\t}\n]"

      # Jason's forms are unchanged.
      assert RustyJson.encode!(%{a: 1}, pretty: true) == "{\n  \"a\": 1\n}"
      assert RustyJson.encode!(%{a: 1}, pretty: false) == ~s({"a":1})
    end
  end

  defp plain_json(fields), do: RustyJson.encode!(Map.new(fields))

  describe "protocol: false" do
    test "0.3.10's results for structs without an implementation and the types it wrote" do
      # 0.3.10's `{"a":1,"b":"x"}` on OTP 25; from OTP 26 atom keys come in the VM's `Map.to_list/1` order (atom
      # index), as a map of the same keys is written.
      assert RustyJson.encode!(%Plain{a: 1, b: "x"}, protocol: false) == plain_json(a: 1, b: "x")

      assert RustyJson.decode!(RustyJson.encode!(%Plain{a: 1, b: "x"}, protocol: false)) ==
               %{"a" => 1, "b" => "x"}

      assert RustyJson.encode!({:ok, 1}, protocol: false) == ~s(["ok",1])
      assert RustyJson.encode!(%{t: {1, "a", {nil}}}, protocol: false) == ~s({"t":[1,"a",[null]]})
      assert RustyJson.encode!(MapSet.new([1, 2]), protocol: false) == "[1,2]"
      assert RustyJson.encode!(1..3, protocol: false) == ~s({"first":1,"last":3})
      assert RustyJson.encode!(1..10//2, protocol: false) == ~s({"first":1,"last":10,"step":2})
      assert RustyJson.encode!(@uri, protocol: false) == ~s("https://a.example/x?y=1")
      assert RustyJson.encode!({}, protocol: false) == "[]"
    end

    test "every struct is its fields (0.3's way: derived and custom implementations are not called)" do
      derived = %Derived{name: "n", age: 3, email: "e@x"}
      json = RustyJson.encode!(derived, protocol: false)

      assert RustyJson.decode!(json) ==
               derived |> Map.from_struct() |> Map.new(fn {k, v} -> {to_string(k), v} end)

      assert RustyJson.encode!(%Plain{a: %Plain{a: [%Plain{}]}}, protocol: false) ==
               RustyJson.encode!(%{a: %{a: [%{a: 1, b: "x"}], b: "x"}, b: "x"})

      # Written natively as ever: dates, fragments, ordered objects.
      assert RustyJson.encode!(
               [~D[2024-01-02], Fragment.new("[1]"), OrderedObject.new(b: 1, a: 2)],
               protocol: false
             ) ==
               ~s(["2024-01-02",[1],{"b":1,"a":2}])
    end

    test "with every escape mode, pretty, sort_keys and maps: :strict, as the same data written as plain terms" do
      term = %{
        "k" => [MapSet.new(["<é>"]), {1, %Plain{b: "\u2028</"}}, 1..2, @uri],
        :z => {%{"y" => 1, "a" => {2}}}
      }

      plain = %{
        "k" => [
          ["<é>"],
          [1, %{a: 1, b: "\u2028</"}],
          OrderedObject.new([{"first", 1}, {"last", 2}]),
          URI.to_string(@uri)
        ],
        :z => [%{"y" => 1, "a" => [2]}]
      }

      for escape <- [:json, :javascript_safe, :html_safe, :unicode_safe],
          extra <- [
            [],
            [pretty: true],
            [sort_keys: true],
            [maps: :strict],
            [pretty: 3, sort_keys: true]
          ] do
        opts = [escape: escape] ++ extra

        assert RustyJson.encode!(term, [protocol: false] ++ opts) ==
                 RustyJson.encode!(plain, opts)
      end

      assert {:error, %RustyJson.EncodeError{}} =
               RustyJson.encode(%{"a" => {1}, :a => 2}, protocol: false, maps: :strict)
    end

    test "through the streams' encoders" do
      items = [{1, 2}, %Plain{}, MapSet.new([3])]

      plain = plain_json(a: 1, b: "x")

      assert Enum.to_list(RustyJson.Stream.encode_lines(items, protocol: false))
             |> IO.iodata_to_binary() == "[1,2]\n#{plain}\n[3]\n"

      assert RustyJson.Stream.encode_array(items, protocol: false)
             |> Enum.to_list()
             |> IO.iodata_to_binary() == "[[1,2],#{plain},[3]]"
    end

    test "what has no JSON form is still an error" do
      for bad <- [self(), make_ref(), fn -> 1 end, %{{1, 2} => 3}] do
        assert_raise Protocol.UndefinedError, fn -> RustyJson.encode!(bad, protocol: false) end
      end
    end
  end

  describe "Jason's defaults stay" do
    test "tuples, URIs and structs without an implementation raise without protocol: false" do
      for value <- [{:ok, 1}, @uri, %Plain{}, MapSet.new([1]), 1..3, %{t: {1}}] do
        assert {:error, %Protocol.UndefinedError{}} = RustyJson.encode(value)
        assert {:error, %Protocol.UndefinedError{}} = RustyJson.encode(value, protocol: true)
      end

      # Repeated keys: the first wins (0.3.10's default was the last: one option away).
      assert RustyJson.decode!(~s({"a":1,"a":2})) == %{"a" => 1}
      assert RustyJson.decode!(~s({"a":1,"a":2}), duplicate_keys: :last) == %{"a" => 2}
    end

    test "config :rusty_json, tuples_and_uris: true writes tuples and URIs by default (compiled in a child VM)" do
      root = File.cwd!()

      code = """
      Application.put_env(:rusty_json, :tuples_and_uris, true)
      Code.put_compiler_option(:ignore_module_conflict, true)
      # The modules that read the config, and those that inline the default options.
      for file <- ~w(encode_options.ex encoder.ex ../rusty_json.ex fallback.ex stream.ex) do
        file = Path.join("lib/rusty_json", file)
        Code.compile_file(Path.join(#{inspect(root)}, file))
      end
      uri = URI.parse("https://a.example/x?y=1")
      IO.write(inspect([
        RustyJson.encode!({:ok, 1}),
        RustyJson.encode!(uri),
        RustyJson.encode!(%{t: [{1, uri}]}),
        RustyJson.encode!({1, {2}}, pretty: true),
        IO.iodata_to_binary(RustyJson.Encoder.encode({:a, 1}, [])),
        match?({:error, %Protocol.UndefinedError{}}, RustyJson.encode(%RustyJson.Test.Plain{}))
      ]))
      """

      {output, status} = RustyJson.ChildVM.run(code, 240)
      assert status == 0, output

      assert output =~
               ~s(["[\\"ok\\",1]", "\\"https://a.example/x?y=1\\"", "{\\"t\\":[[1,\\"https://a.example/x?y=1\\"]]}", "[\\n  1,\\n  [\\n    2\\n  ]\\n]", "[\\"a\\",1]", true])
    end
  end

  describe "Fragment.new!/1" do
    test "checks the JSON first: a fragment, or a DecodeError at decode/1's position" do
      assert RustyJson.encode!(%{"x" => Fragment.new!(~s({"a":1}))}) == ~s({"x":{"a":1}})
      assert RustyJson.encode!([Fragment.new!(["[1,", ["2]"]])]) == "[[1,2]]"

      for bad <- [~s({"a":}), "[1,]", "1 2", "", <<34, 0xFF, 34>>] do
        {:error, expected} = RustyJson.decode(bad)
        error = assert_raise DecodeError, fn -> Fragment.new!(bad) end
        assert error.position == expected.position
      end
    end
  end

  describe "max_bytes:" do
    test "an input longer than the limit is an error naming it, before iodata is flattened" do
      assert {:error, %DecodeError{limit: 6, position: 6} = e} =
               RustyJson.decode(~s("hello"), max_bytes: 6)

      assert Exception.message(e) =~ "max_bytes limit of 6"
      assert RustyJson.decode(~s("hello"), max_bytes: 7) == {:ok, "hello"}

      assert {:error, %DecodeError{limit: 6}} =
               RustyJson.decode([~s("hel), [~s(lo")]], max_bytes: 6)

      assert RustyJson.decode([~s("hel), [~s(lo")]], %{max_bytes: 7}) == {:ok, "hello"}

      assert_raise DecodeError, ~r/max_bytes limit of 6/, fn ->
        RustyJson.decode!(~s("hello"), max_bytes: 6)
      end

      # No limit: 0 (0.3's), nil or :infinity; anything else is an ArgumentError naming the option.
      for none <- [0, nil, :infinity],
          do: assert(RustyJson.decode(~s("hello"), max_bytes: none) == {:ok, "hello"})

      assert_raise ArgumentError, ~r/:max_bytes/, fn -> RustyJson.decode("1", max_bytes: -1) end
    end

    test "counts the bytes given, with the other options, and in get/3" do
      big = RustyJson.encode!(%{"list" => Enum.to_list(1..10_000)})
      size = byte_size(big)
      assert {:ok, _} = RustyJson.decode(big, max_bytes: size, keys: :atoms, strings: :copy)

      assert {:error, %DecodeError{limit: limit}} =
               RustyJson.decode(big, max_bytes: size - 1, keys: :atoms)

      assert limit == size - 1
      assert RustyJson.get(big, "/list/9999", max_bytes: size) == {:ok, 10_000}
      assert {:error, %DecodeError{limit: 10}} = RustyJson.get(big, "/list/0", max_bytes: 10)
      # An invalid input over the limit: the limit is what is reported (nothing was read).
      assert {:error, %DecodeError{limit: 2}} = RustyJson.decode("[1,]", max_bytes: 2)
    end
  end

  describe "max_bytes: in streams" do
    test "each document or item at most the limit, whatever the chunks; the envelope kept too" do
      docs =
        for i <- 1..60,
            do: RustyJson.encode!(%{"id" => i, "t" => String.duplicate("x", rem(i, 9) * 8)})

      text = Enum.join(docs, "\n")
      max = 60
      # The first document over the limit, and where it starts.
      {long, _} = docs |> Enum.with_index() |> Enum.find(fn {d, _} -> byte_size(d) > max end)
      start = :binary.match(text, long) |> elem(0)
      short = Enum.take_while(docs, &(byte_size(&1) <= max)) |> Enum.map(&RustyJson.decode!/1)

      for size <- [1, 7, 64, byte_size(text)] do
        chunks = StreamRun.pieces(text, Enum.to_list(size..byte_size(text)//size))
        result = StreamRun.run(RustyJson.Stream.decode_documents(chunks, max_bytes: max))

        assert [{:error, %DecodeError{limit: ^max, position: ^start} = e} | values] =
                 Enum.reverse(result)

        assert Enum.reverse(values) == short
        assert Exception.message(e) =~ "max_bytes limit of #{max}"

        assert StreamRun.run(RustyJson.Stream.decode_documents(chunks, max_bytes: 1_000)) ==
                 Enum.map(docs, &RustyJson.decode!/1)
      end

      doc =
        RustyJson.encode!(%{
          "meta" => String.duplicate("m", 200),
          "data" => Enum.map(1..20, &%{"i" => &1})
        })

      items = for i <- 1..20, do: %{"i" => i}

      # The envelope's tokens are held to the limit too (its 202-byte string, after the items).
      meta = doc |> :binary.match(~s("mmm)) |> elem(0)

      assert Enum.reverse(
               StreamRun.run(RustyJson.Stream.decode_array([doc], at: "/data", max_bytes: 20))
             ) == [
               {:error, %DecodeError{limit: 20, position: meta, offset: meta}}
               | Enum.reverse(items)
             ]

      assert Enum.to_list(RustyJson.Stream.decode_array([doc], at: "/data", max_bytes: 202)) ==
               items

      assert [{:error, %DecodeError{limit: 5}} | _] =
               Enum.reverse(
                 StreamRun.run(RustyJson.Stream.decode_array([doc], at: "/data", max_bytes: 5))
               )

      assert_raise DecodeError, ~r/max_bytes limit of 100/, fn ->
        Enum.to_list(
          RustyJson.Stream.decode_array([doc], at: "/data", envelope: true, max_bytes: 100)
        )
      end

      assert length(
               Enum.to_list(
                 RustyJson.Stream.decode_array([doc], at: "/data", envelope: true, max_bytes: 300)
               )
             ) == 21
    end
  end

  describe "validate_strings: false" do
    test "takes strings' bytes as they are; escapes are still checked; never a term the VM cannot handle" do
      assert RustyJson.decode(<<34, 0xFF, 34>>, validate_strings: false) == {:ok, <<0xFF>>}
      assert {:error, %DecodeError{position: 1}} = RustyJson.decode(<<34, 0xFF, 34>>)

      assert {:error, %DecodeError{position: 1}} =
               RustyJson.decode(<<34, 0xFF, 34>>, validate_strings: true)

      doc = <<"{\"k", 0xC3, "\":[\"a", 0xFF, "\\n\", \"", 0xE2, 0x82, "\"]}">>
      expected = %{<<"k", 0xC3>> => [<<"a", 0xFF, "\n">>, <<0xE2, 0x82>>]}

      for opts <- [[], [strings: :copy], [keys: :copy], [keys: :intern]] do
        assert RustyJson.decode(doc, [validate_strings: false] ++ opts) == {:ok, expected}
      end

      assert {:ok, %OrderedObject{}} =
               RustyJson.decode(doc, validate_strings: false, objects: :ordered_objects)

      assert RustyJson.get(doc, "/k\xC3/0", validate_strings: false) == {:ok, <<"a", 0xFF, "\n">>}
      # A lone surrogate escape is still an error.
      assert {:error, %DecodeError{}} = RustyJson.decode(~s(["\\ud800"]), validate_strings: false)
      # A key that is not UTF-8 cannot become an atom: an error, not a crash.
      assert_raise ArgumentError, fn ->
        RustyJson.decode(<<"{\"", 0xFF, "\":1}">>, validate_strings: false, keys: :atoms)
      end

      # Streams take the option too.
      lines = <<"\"", 0xFF, "\"\n[1]\n">>

      assert Enum.to_list(RustyJson.Stream.decode_documents([lines], validate_strings: false)) ==
               [<<0xFF>>, [1]]
    end
  end

  doctest RustyJson.Decoder

  test "RustyJson.Decoder.parse/2 is decode/2" do
    for {input, opts} <- [
          {"[1]", []},
          {~s({"a":1}), [keys: :atoms]},
          {"[1,]", []},
          {~s("hello"), [max_bytes: 6]}
        ] do
      assert RustyJson.Decoder.parse(input, opts) == RustyJson.decode(input, opts)
    end
  end

  test "lean:, compress: and dirty_threshold: are accepted" do
    assert RustyJson.encode!(%{a: 1}, lean: true) == ~s({"a":1})
    assert :zlib.gunzip(RustyJson.encode!(%{a: 1}, compress: :gzip)) == ~s({"a":1})
    assert RustyJson.decode!("[1]", dirty_threshold: 0) == [1]
    assert RustyJson.decode!("[1]", lean: true) == [1]
  end
end
