defmodule RustyJson.DecodeAtomsSafetyTest do
  # Not async: the atom table is global, so as little else as possible should create atoms while this counts them.
  use ExUnit.Case, async: false

  test "keys: :atoms! never creates an atom, whatever the input" do
    # Every key of every run is checked by name. The global count is checked too, but other work in the VM (a
    # module loaded on demand, a lingering process of an earlier test) can add atoms during a run, so a run whose
    # count moved is repeated with keys never seen before, up to three runs in all. A decoder that makes atoms
    # from the input moves the count in every run.
    assert Enum.any?(1..3, fn _ -> count_unchanged_over_a_run?() end),
           "the atom count grew in every run"

    assert RustyJson.decode!(~s({"ok":1}), keys: :atoms!) == %{ok: 1}
  end

  defp count_unchanged_over_a_run? do
    # A non-empty list as the type checker sees it (Elixir 1.19 flags `hd/1` of a comprehension, maybe empty).
    key = fn i -> "rusty_json_never_an_atom_#{i}_#{System.unique_integer([:positive])}" end
    first = key.(0)
    keys = [first | for(i <- 1..1999, do: key.(i))]

    first_doc = ~s({"#{first}":1})

    docs =
      [first_doc | Enum.map(tl(keys), &~s({"#{&1}":1}))] ++
        [~s([{"ok":1},{") <> first <> ~s(":2}])]

    # Warm up the code paths (loading modules creates atoms) before counting.
    assert_raise ArgumentError, fn -> RustyJson.decode!(first_doc, keys: :atoms!) end
    assert_raise ArgumentError, fn -> RustyJson.decode(first_doc, keys: :atoms!) end
    before = :erlang.system_info(:atom_count)

    for doc <- docs do
      assert_raise ArgumentError, fn -> RustyJson.decode!(doc, keys: :atoms!) end
      assert_raise ArgumentError, fn -> RustyJson.decode(doc, keys: :atoms!) end
    end

    after_run = :erlang.system_info(:atom_count)

    for key <- keys do
      assert_raise ArgumentError, fn -> String.to_existing_atom(key) end
    end

    after_run == before
  end

  describe "a key that is not an atom is reported where Jason converts it" do
    # Jason converts a key after its value and the `,` or `}` that follows: a syntax error before that point is
    # the DecodeError `decode/2` returns; after it, the key's ArgumentError is raised.
    test "an error inside the value, or before the delimiter, comes first" do
      for {json, position} <- [
            {~s({"zz_unknown1": [1,}), 19},
            {~s({"zz_unknown1": 1 ]), 18},
            {~s({"zz_unknown1": {"ok": tru}}), 23},
            {~s({"zz_unknown1": 1), 17}
          ] do
        assert {:error, %RustyJson.DecodeError{position: ^position}} =
                 RustyJson.decode(json, keys: :atoms!)

        assert_raise RustyJson.DecodeError, fn -> RustyJson.decode!(json, keys: :atoms!) end
      end
    end

    test "after the value's delimiter the key raises, even if the document is bad further on" do
      for json <- [~s({"zz_unknown1": [1], x), ~s({"zz_unknown1": 1}), ~s([{"zz_unknown1": 1}, ])] do
        assert_raise ArgumentError, fn -> RustyJson.decode(json, keys: :atoms!) end
      end
    end

    test "of two such keys the inner one is converted, and reported, first" do
      json = ~s({"zz_outer_unknown": {"zz_inner_unknown": 1}})

      assert_raise ArgumentError, fn -> RustyJson.decode(json, keys: :atoms!) end
      # The NIF's answer names the key (String.to_existing_atom/1's message does not).
      {native, nil, _, _} = RustyJson.DecodeOptions.parse(keys: :atoms!)

      assert RustyJson.Native.decode(json, native) ==
               {:error, {:existing_atom, "zz_inner_unknown"}}

      outer_first = ~s({"zz_outer_unknown": 1, "zz_inner_unknown": 2})

      assert RustyJson.Native.decode(outer_first, native) ==
               {:error, {:existing_atom, "zz_outer_unknown"}}
    end

    test "a key that is not UTF-8 (validate_strings: false) is named by its bytes, short or long" do
      long = String.duplicate("k", 5000)

      for prefix <- ["abc", long], mode <- [:atoms, :atoms!] do
        key = <<prefix::binary, 0xFF, "def">>
        json = ~s({"#{key}":1})
        opts = [validate_strings: false, keys: mode]

        for decode <- [&RustyJson.decode!/2, &RustyJson.decode/2] do
          error = assert_raise ArgumentError, fn -> decode.(json, opts) end
          assert error.message =~ inspect(key)
        end
      end

      assert_raise ArgumentError,
                   ~s(could not turn the key <<97, 98, 99, 255, 100, 101, 102>> into an atom),
                   fn ->
                     RustyJson.decode!(<<"{\"abc", 0xFF, "def\":1}">>,
                       validate_strings: false,
                       keys: :atoms
                     )
                   end
    end

    test "across the slices of a large document" do
      padding = Enum.map_join(1..20_000, ",", &~s({"ok":#{&1}}))
      bad = ~s([#{padding}, {"zz_unknown1": [#{padding},}]) <> "]"
      assert {:error, %RustyJson.DecodeError{}} = RustyJson.decode(bad, keys: :atoms!)
      good = ~s([#{padding}, {"zz_unknown1": [#{padding}]}])
      assert_raise ArgumentError, fn -> RustyJson.decode(good, keys: :atoms!) end
    end
  end
end
