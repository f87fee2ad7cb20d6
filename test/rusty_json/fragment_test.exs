defmodule RustyJson.FragmentTest do
  use ExUnit.Case, async: true

  alias RustyJson.Fragment

  test "encode is a function of the options, as Jason's, for iodata and function fragments" do
    for iodata <- [~s({"a":1}), [~s({"a":), ["1"], "}"], ~c"[1]"] do
      fragment = Fragment.new(iodata)
      assert is_function(fragment.encode, 1)
      assert fragment.encode.([]) == iodata
      assert fragment.encode.(escape: :html_safe) == iodata
      assert RustyJson.encode!([fragment]) == "[" <> IO.iodata_to_binary(iodata) <> "]"
    end

    fun = fn opts ->
      send(self(), {:called, opts})
      "[true]"
    end

    fragment = Fragment.new(fun)
    assert fragment.encode == fun
    assert RustyJson.encode!(%{"x" => fragment}) == ~s({"x":[true]})
    assert_received {:called, _opts}
  end

  test "a fragment built by hand with only a function, as Jason code writes it" do
    fragment = %Fragment{encode: fn _opts -> ~s("hand") end}
    assert RustyJson.encode!([fragment, Fragment.new("1")]) == ~s(["hand",1])
    assert RustyJson.encode!(%{a: fragment}, pretty: true) == ~s({\n  "a": "hand"\n})

    # Iodata in `encode`, as earlier RustyJson versions stored it, is still written.
    assert RustyJson.encode!([%Fragment{encode: ["[", "1]"]}]) == "[[1]]"
  end

  test "iodata fragments are written by the NIF; function fragments are called once per encode" do
    parent = self()

    counted =
      Fragment.new(fn _ ->
        send(parent, :called)
        "2"
      end)

    assert RustyJson.encode!([Fragment.new("1"), counted, Fragment.new(["3"])]) == "[1,2,3]"
    assert_received :called
    refute_received :called
  end

  test "fragments inside derived structs, ordered objects and pretty output" do
    fragment = Fragment.new(~s({"k":[1,2]}))
    ordered = RustyJson.OrderedObject.new(b: fragment, a: Fragment.new(fn _ -> "null" end))
    assert RustyJson.encode!(ordered) == ~s({"b":{"k":[1,2]},"a":null})

    assert RustyJson.encode!(ordered, pretty: true) ==
             ~s({\n  "b": {\n    "k": [\n      1,\n      2\n    ]\n  },\n  "a": null\n})
  end

  describe "a fragment whose iodata is not iodata" do
    # Jason raises ArgumentError (its IO.iodata_to_binary/1 of the output), from encode/2 too; RustyJson's message
    # names the bad iodata.
    @message "invalid iodata in a RustyJson.Fragment: [1000] (not an iodata term)"

    test "raises ArgumentError naming it, from encode/2 and encode!/2" do
      bad = Fragment.new([1000])

      for term <- [
            %{a: bad},
            bad,
            [1, [bad]],
            %RustyJson.OrderedObject{values: [a: bad]},
            Map.new(1..40, &{&1, bad}),
            %RustyJson.Test.Derived{name: bad},
            [%RustyJson.Test.Point{x: 1, y: bad}]
          ],
          opts <- [[], [pretty: true], [sort_keys: true], [compress: :gzip], [maps: :strict]] do
        assert_raise ArgumentError, @message, fn -> RustyJson.encode(term, opts) end
        assert_raise ArgumentError, @message, fn -> RustyJson.encode!(term, opts) end
      end

      assert_raise ArgumentError, @message, fn -> RustyJson.encode_to_iodata(%{a: bad}) end
      assert_raise ArgumentError, @message, fn -> RustyJson.Encode.value([bad], []) end
    end

    test "from a fragment function or an encoder implementation" do
      assert_raise ArgumentError, @message, fn ->
        RustyJson.encode(%{a: Fragment.new(fn _opts -> [1000] end)})
      end

      assert_raise ArgumentError,
                   "invalid iodata in a RustyJson.Fragment: %{} (not an iodata term)",
                   fn ->
                     RustyJson.encode([Fragment.new(fn _opts -> %{} end)])
                   end

      # An implementation's list that is not iodata is a plain term, encoded again (RustyJson 0.3.10's way;
      # test/rusty_json/encoder_plain_results_test.exs); what cannot be encoded names the implementation.
      assert RustyJson.encode(%{a: %RustyJson.Test.BadIodata{value: -1}}) == {:ok, ~s({"a":[-1]})}

      assert_raise ArgumentError,
                   ~r/^the RustyJson.Encoder implementation for RustyJson.Test.BadIodata returned \[\{1, 2\}\]/,
                   fn -> RustyJson.encode(%{a: %RustyJson.Test.BadIodata{value: {1, 2}}}) end
    end

    test "in a stream" do
      stream = RustyJson.Stream.encode_lines([1, Fragment.new(["2", [1000]])])

      assert_raise ArgumentError,
                   ~r/invalid iodata in a RustyJson.Fragment: \["2", \[1000\]\]/,
                   fn ->
                     Enum.to_list(stream)
                   end
    end

    test "valid iodata, bytes included, is written" do
      assert RustyJson.encode!([Fragment.new([?1, "2", [?3]])]) == "[123]"
      assert RustyJson.encode!([Fragment.new(fn _ -> [?4, ["5"]] end)]) == "[45]"
    end
  end

  test "a map that is not a fragment's shape raises ArgumentError naming it, wherever it is" do
    for bad <- [
          %{__struct__: RustyJson.Fragment, a: 1},
          %{__struct__: RustyJson.Fragment, encode: fn _ -> "1" end},
          %RustyJson.Fragment{iodata: 5},
          %RustyJson.Fragment{encode: 5},
          %RustyJson.Fragment{encode: nil, iodata: nil},
          Map.put(RustyJson.Fragment.new("1"), :extra, 1)
        ],
        term <- [bad, [bad], %{"k" => bad}, [1, %{"k" => [bad]}]],
        opts <- [[], [pretty: true], [sort_keys: true]] do
      error = assert_raise ArgumentError, fn -> RustyJson.encode!(term, opts) end
      assert error.message =~ "invalid RustyJson.Fragment"

      assert_raise ArgumentError, ~r/invalid RustyJson.Fragment/, fn ->
        RustyJson.encode(term, opts)
      end
    end
  end
end
