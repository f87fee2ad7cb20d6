defmodule RustyJson.EncodeApiTest do
  use ExUnit.Case, async: true

  alias RustyJson.{EncodeError, Fragment}
  alias RustyJson.Test.{Derived, DerivedExcept, DerivedOnly, Label, Money, NoImpl}
  import RustyJson.Test.Expect, only: [derived: 2]

  describe "scalars" do
    test "integers of any size" do
      assert RustyJson.encode!(0) == "0"
      assert RustyJson.encode!(-(2 ** 63)) == "-9223372036854775808"
      assert RustyJson.encode!(2 ** 64 - 1) == "18446744073709551615"
      assert RustyJson.encode!(2 ** 64) == "18446744073709551616"
      assert RustyJson.encode!(-(10 ** 100)) == "-1" <> String.duplicate("0", 100)
      assert RustyJson.encode!(%{(2 ** 70) => 1}) == ~s({"#{2 ** 70}":1})
    end

    test "atoms, including non-Latin-1 ones" do
      assert RustyJson.encode!(:é) == ~s("é")
      assert RustyJson.encode!(:日本) == ~s("日本")
      # Atom keys come in Map.to_list/1 order (by name on OTP 25, by atom index on OTP 26+).
      map = %{日本: 1, é: 2}

      assert RustyJson.encode!(map) ==
               "{" <>
                 Enum.map_join(Map.to_list(map), ",", fn {k, v} -> ~s("#{k}":#{v}) end) <> "}"

      assert RustyJson.encode!(:"a\"b") == ~s("a\\"b")
    end

    test "many atoms (the per-call atom cache) in every escape mode" do
      atoms = Enum.map(1..3000, &String.to_atom("atom/#{&1}<é>"))
      map = Map.new(atoms, &{&1, [&1]})

      for escape <- [:json, :html_safe, :unicode_safe] do
        string = &RustyJson.encode!(Atom.to_string(&1), escape: escape)
        list = "[" <> Enum.map_join(atoms, ",", string) <> "]"

        object =
          "{" <>
            Enum.map_join(Map.to_list(map), ",", fn {k, [v]} ->
              "#{string.(k)}:[#{string.(v)}]"
            end) <> "}"

        assert RustyJson.encode!([atoms, map, atoms], escape: escape) ==
                 "[#{list},#{object},#{list}]"
      end
    end

    test "float keys are written as Float.to_string/1 does" do
      assert RustyJson.encode!(%{1.0e3 => 1, 0.5 => 2}) == ~s({"0.5":2,"1.0e3":1})
    end
  end

  describe "options" do
    test "escape modes" do
      s = "</script>\u2028é😀"
      assert RustyJson.encode!(s) == ~s("</script>\u2028é😀")
      assert RustyJson.encode!(s, escape: :javascript_safe) == ~s("</script>\\u2028é😀")
      assert RustyJson.encode!(s, escape: :html_safe) == ~s("\\u003C\\/script>\\u2028é😀")

      assert RustyJson.encode!(s, escape: :unicode_safe) ==
               ~s("</script>\\u2028\\u00E9\\uD83D\\uDE00")

      assert RustyJson.encode!(%{s => 1}, escape: :html_safe) ==
               ~s({"\\u003C\\/script>\\u2028é😀":1})
    end

    test "maps: :strict rejects keys converting to the same string" do
      assert {:error, %EncodeError{message: "duplicate key: a"}} =
               RustyJson.encode(%{:a => 1, "a" => 2}, maps: :strict)

      assert RustyJson.encode!(%{:a => 1, "b" => 2}, maps: :strict) == ~s({"a":1,"b":2})

      assert {:error, %EncodeError{message: "duplicate key: x"}} =
               RustyJson.encode([%{"x" => 1, x: 2}], maps: :strict)
    end

    test "pretty with defaults and custom layout" do
      term = %{"a" => [1, %{}], "b" => []}

      assert RustyJson.encode!(term, pretty: true) ==
               "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}"

      assert RustyJson.encode!(term,
               pretty: [indent: ["\t"], line_separator: "\r\n", after_colon: ""]
             ) ==
               "{\r\n\t\"a\":[\r\n\t\t1,\r\n\t\t{}\r\n\t],\r\n\t\"b\":[]\r\n}"
    end

    test "bad option values are ArgumentErrors naming the option" do
      assert_raise ArgumentError, ~r/:escape option/, fn ->
        RustyJson.encode!(1, escape: :nope)
      end

      assert_raise ArgumentError, ~r/:maps option/, fn -> RustyJson.encode(1, maps: :lax) end
      # (A number of spaces or a string is an indent, as RustyJson 0.3 takes them.)
      assert_raise ArgumentError, ~r/:pretty option/, fn -> RustyJson.encode(1, pretty: -1) end
      assert_raise ArgumentError, ~r/:pretty option/, fn -> RustyJson.encode(1, pretty: :yes) end

      assert_raise ArgumentError, ~r/pretty option/, fn ->
        RustyJson.encode(1, pretty: [indent: -1])
      end

      assert_raise ArgumentError, ~r/pretty option/, fn ->
        RustyJson.encode(1, pretty: [indent: :tab])
      end

      assert_raise ArgumentError, ~r/:protocol option/, fn ->
        RustyJson.encode(1, protocol: :no)
      end
    end

    test "unknown options are ignored, as Jason does; a map of options works too" do
      assert RustyJson.encode!([1], foo: :bar) == "[1]"
      assert RustyJson.encode!(["/"], %{escape: :html_safe}) == ~s(["\\/"])
    end

    test "the protocol encodes built-in values too (for use inside implementations)" do
      assert IO.iodata_to_binary(RustyJson.Encoder.encode(%{"a" => [1, nil]}, [])) ==
               ~s({"a":[1,null]})

      assert IO.iodata_to_binary(RustyJson.Encoder.encode("<", escape: :html_safe)) ==
               ~s("\\u003C")

      assert IO.iodata_to_binary(RustyJson.Encoder.encode(~D[2026-01-01], [])) == ~s("2026-01-01")
    end

    test "encode_to_iodata" do
      assert {:ok, iodata} = RustyJson.encode_to_iodata(%{a: 1})
      assert IO.iodata_to_binary(iodata) == ~s({"a":1})
      assert IO.iodata_to_binary(RustyJson.encode_to_iodata!([1], pretty: true)) == "[\n  1\n]"
      assert {:error, %Protocol.UndefinedError{}} = RustyJson.encode_to_iodata({1})
    end
  end

  describe "errors" do
    test "unsupported terms are Protocol.UndefinedError for RustyJson.Encoder" do
      for value <- [
            {1, 2},
            self(),
            make_ref(),
            fn -> :ok end,
            <<1::3>>,
            <<1::13>>,
            <<"abcdefgh", 1::1>>
          ] do
        assert {:error, %Protocol.UndefinedError{protocol: RustyJson.Encoder, value: ^value}} =
                 RustyJson.encode([1, %{"k" => value}])

        assert_raise Protocol.UndefinedError, fn -> RustyJson.encode!(value) end
      end

      assert {:error, %Protocol.UndefinedError{description: "cannot encode a bitstring to JSON"}} =
               RustyJson.encode(<<1::3>>)

      assert {:error, %Protocol.UndefinedError{value: {:a, 1}}} = RustyJson.encode(a: 1)
    end

    test "an improper list is an ArgumentError, not a silently shortened array" do
      assert {:error, %ArgumentError{message: "cannot encode an improper list" <> _}} =
               RustyJson.encode([1, [2 | 3]])

      # Lists of numbers are written without a frame up to their end: the end is checked there too.
      for list <- [[1.5 | 2], [1, 2.5 | :x], [[1, 2.0 | "t"]]] do
        assert {:error, %ArgumentError{message: "cannot encode an improper list" <> _}} =
                 RustyJson.encode(list)
      end
    end

    test "invalid UTF-8 reports the byte and the whole string" do
      assert_raise EncodeError, "invalid byte 0x80 in <<111, 107, 128, 120>>", fn ->
        RustyJson.encode!(%{"k" => [<<111, 107, 128, 120>>]})
      end
    end

    test "a key without String.Chars raises even from encode/2, as Jason" do
      assert_raise Protocol.UndefinedError, ~r/String.Chars/, fn ->
        RustyJson.encode(%{{1} => 1})
      end
    end
  end

  describe "structs" do
    test "calendar types are ISO 8601 strings" do
      dt = ~U[2026-11-22 12:00:00.123Z]

      assert RustyJson.encode!([~D[2026-11-22], ~T[12:00:00], ~N[2026-11-22 12:00:00], dt]) ==
               ~s(["2026-11-22","12:00:00","2026-11-22T12:00:00","2026-11-22T12:00:00.123Z"])
    end

    test "derived structs write their fields (in the compiling VM's Map.keys order, or in `only:` order)" do
      assert RustyJson.encode!(%Derived{name: "Ada", age: 36}) ==
               derived(Derived, %{name: ~s("Ada"), age: "36", email: "null"})

      assert RustyJson.encode!(%DerivedOnly{id: 1, name: "x", secret: "s"}) ==
               ~s({"name":"x","id":1})

      assert RustyJson.encode!(%DerivedExcept{id: 1, name: "x", secret: "s"}) ==
               derived(DerivedExcept, %{id: "1", name: ~s("x")})
    end

    test "hand-written implementations, nested in plain data, with options" do
      term = %{"price" => %Money{amount: 10, currency: "</€>"}, "n" => [%Derived{age: 1}]}

      assert RustyJson.encode!(term, escape: :html_safe) ==
               ~s({"n":[) <>
                 derived(Derived, %{age: "1", email: "null", name: "null"}) <>
                 ~s(],"price":{"amount":10,"currency":"\\u003C\\/€>"}})
    end

    test "pretty output lays out what the protocol returned like the rest" do
      term = %{"price" => %Money{amount: 10, currency: "EUR"}, "d" => ~D[2026-01-02]}

      assert RustyJson.encode!(term, pretty: true) ==
               RustyJson.encode!(
                 %{
                   "price" => RustyJson.OrderedObject.new(amount: 10, currency: "EUR"),
                   "d" => "2026-01-02"
                 },
                 pretty: true
               )
    end

    test "what a struct leaves out cannot fail its encode" do
      bad = %{RustyJson.Test.Wide.__struct__() | f1: 1, A: <<255>>}
      bad = Enum.reduce(2..40, bad, fn i, acc -> Map.put(acc, :"f#{i}", {:not_json, i}) end)
      assert RustyJson.encode!([bad, %{"x" => bad}]) == ~s([{"f1":1},{"x":{"f1":1}}])

      assert RustyJson.encode!(%DerivedOnly{id: 1, name: "n", secret: {:tuple}}) ==
               ~s({"name":"n","id":1})
    end

    test "a struct without an implementation" do
      assert {:error, %Protocol.UndefinedError{protocol: RustyJson.Encoder, value: %NoImpl{}} = e} =
               RustyJson.encode([%NoImpl{}])

      assert Exception.message(e) =~ "@derive"
      assert_raise Protocol.UndefinedError, fn -> RustyJson.encode!(%{a: %NoImpl{}}) end
    end

    test "keys with String.Chars keep Map.to_list order" do
      map = %{~D[2026-01-01] => 1, %Label{text: "x"} => 2, ~c"ab" => 3, "z" => 4}
      expected = Enum.map_join(Map.to_list(map), ",", fn {k, v} -> ~s("#{k}":#{v}) end)
      assert RustyJson.encode!(map) == "{" <> expected <> "}"
    end

    test "fragments: iodata, functions and ordered objects" do
      assert RustyJson.encode!([Fragment.new(["{\"a\":", "1}"])]) == ~s([{"a":1}])
      assert RustyJson.encode!(%{x: Fragment.new(fn _opts -> "[true]" end)}) == ~s({"x":[true]})

      assert RustyJson.encode!(Fragment.new(~s({"a":[1,{}]})), pretty: true) ==
               "{\n  \"a\": [\n    1,\n    {}\n  ]\n}"

      assert IO.iodata_to_binary(RustyJson.Encode.keyword([b: 1, a: [2]], [])) ==
               ~s({"b":1,"a":[2]})
    end
  end

  describe "size and depth" do
    test "deep lists and maps encode without native recursion" do
      # Depth is bounded by memory only: the walk keeps its own stack, and each slice's checkpoint costs what the
      # slice did, not the depth open (encode_depth_test.exs counts that work), so a million levels take a
      # fraction of a second.
      depth = 1_000_000
      list = Enum.reduce(1..depth, [], fn _, acc -> [acc] end)
      json = RustyJson.encode!(list)
      assert byte_size(json) == 2 * depth + 2
      assert binary_part(json, 0, 4) == "[[[["

      depth = 200_000
      map = Enum.reduce(1..depth, %{}, fn _, acc -> %{"a" => acc} end)
      json = RustyJson.encode!(map)
      assert byte_size(json) == 6 * depth + 2
    end

    test "a walk continued on the dirty scheduler writes exactly what small walks write" do
      # Hash maps (> 32 keys), ordered objects and lists, nested, so the budget runs out somewhere inside.
      item = fn i ->
        Map.new(1..40, fn k -> {"k#{k}", [i, k, %{"s" => "v#{i}-#{k}", "l" => [[k], []]}]} end)
        |> Map.put("o", %RustyJson.OrderedObject{values: [{"z", i}, {:a, [i, %{}]}]})
      end

      big = %{"items" => Enum.map(1..800, item), "n" => 1}
      compact = RustyJson.encode!(big)

      reference =
        "{" <>
          Enum.map_join(Map.to_list(big), ",", fn
            {"items", items} ->
              ~s("items":[) <> Enum.map_join(items, ",", &RustyJson.encode!/1) <> "]"

            {k, v} ->
              RustyJson.encode!(k) <> ":" <> RustyJson.encode!(v)
          end) <> "}"

      assert compact == reference

      assert RustyJson.encode!(big, pretty: true) ==
               RustyJson.encode!(Fragment.new(compact), pretty: true)

      assert RustyJson.encode!(big, escape: :unicode_safe, maps: :strict) == compact
    end

    test "long lists of numbers stopped anywhere (dirty scheduler) write what small walks write" do
      floats = Enum.map(1..400_000, &(&1 / 7))
      ints = Enum.to_list(-200_000..200_000)
      mixed = Enum.map(1..200_000, &if(rem(&1, 5) == 0, do: "s#{&1}", else: &1 * 1.5))
      pairs = Enum.map(1..200_000, &[&1 / 3, -&1 / 9])

      for list <- [floats, ints, mixed, pairs, [floats, [ints]]] do
        assert RustyJson.encode!(list) ==
                 "[" <> Enum.map_join(list, ",", &RustyJson.encode!/1) <> "]"
      end
    end

    test "work that is big in one piece (a long string, a huge integer, deep pretty indentation)" do
      long = String.duplicate("é\n", 1_000_000)
      assert RustyJson.encode!([1, long]) == "[1," <> RustyJson.encode!(long) <> "]"

      huge = 7 ** 200_000
      assert RustyJson.encode!(%{"n" => [huge]}) == ~s({"n":[#{huge}]})

      deep = Enum.reduce(1..3000, 1, fn _, acc -> [acc] end)
      pretty = RustyJson.encode!(deep, pretty: true)
      assert pretty == RustyJson.encode!(Fragment.new(RustyJson.encode!(deep)), pretty: true)
    end

    test "large terms (past the normal scheduler's budget) give the same output and errors" do
      big = Enum.map(1..100_000, &%{"i" => &1, "s" => "x#{&1}", "f" => &1 / 3})
      json = RustyJson.encode!(big)
      pretty = RustyJson.encode!(big, pretty: true)

      for ref <- RustyJson.Reference.names() do
        assert RustyJson.Reference.decode!(ref, json) == big, "as #{ref}"
        assert RustyJson.Reference.decode!(ref, pretty) == big, "as #{ref}"
      end

      assert {:error, %EncodeError{message: "invalid byte 0xFF in <<255>>"}} =
               RustyJson.encode(big ++ [<<255>>])

      assert RustyJson.encode!(big ++ [~D[2026-01-01]]) ==
               String.trim_trailing(json, "]") <> ~s(,"2026-01-01"])
    end
  end
end
