defmodule RustyJson.DecodeOptionsTest do
  use ExUnit.Case, async: true

  alias RustyJson.{DecodeError, OrderedObject, Reference}

  # Jason (and RustyJson) keep the first of duplicate keys; a reference that keeps the last (jiffy) is corrected
  # for the one duplicating shape below, `{"a":1,"a":i,"b":2}`.
  defp first_wins(%{"a" => _, "b" => 2} = map, :last) when map_size(map) == 2,
    do: %{map | "a" => 1}

  defp first_wins(map, _), do: map

  describe "keys" do
    # Documents of 512 bytes or more are decoded with the key cache under the default keys.
    test "the default keys of a longer document are the cache's: equal values, repeated keys one term" do
      record = fn i ->
        ~s({"level":"info","message_with_a_longer_key_name":"m#{i}","n":#{i},"tags":{"a":1,"b":[#{i}]}})
      end

      for count <- [10, 5_000] do
        json = "[" <> Enum.map_join(1..count, ",", record) <> "]"
        assert byte_size(json) >= 512

        for opts <- [[], [strings: :copy], [objects: :ordered_objects]] do
          decoded = RustyJson.decode!(json, opts)
          assert decoded == RustyJson.decode!(json, [keys: :copy] ++ opts)

          if opts == [] do
            [first | rest] = decoded
            last = List.last(rest)
            # Heap binaries (the short key) and sub-binaries of the input (the long one) alike.
            for key <- ["level", "message_with_a_longer_key_name"] do
              [k1] = for {k, _} <- first, k == key, do: k
              [k2] = for {k, _} <- last, k == key, do: k
              assert :erts_debug.same(k1, k2), "#{key} in #{count} records"
            end
          end
        end
      end

      # Below 512 bytes nothing is shared; the values are the same.
      small = ~s([{"level":1},{"level":2}])
      [a, b] = RustyJson.decode!(small)
      assert a == %{"level" => 1} and b == %{"level" => 2}
      refute :erts_debug.same(hd(Map.keys(a)), hd(Map.keys(b)))
    end

    test "strings, copy and intern give the same values" do
      json = ~s([{"a":1,"b":{"a":2}},{"a":3,"b":null},{"\\u0061":4}])
      expected = [%{"a" => 1, "b" => %{"a" => 2}}, %{"a" => 3, "b" => nil}, %{"a" => 4}]

      for keys <- [:strings, :copy, :intern] do
        assert RustyJson.decode!(json, keys: keys) == expected
      end
    end

    test "intern shares one key term across objects (and still works past its give-up point)" do
      many = Enum.map_join(1..3000, ",", &~s({"k#{&1}":#{&1},"same":true}))
      decoded = RustyJson.decode!("[" <> many <> "]", keys: :intern)
      assert length(decoded) == 3000
      assert Enum.at(decoded, 2999) == %{"k3000" => 3000, "same" => true}
    end

    test "intern's key predictions: keys followed by different keys in turn, near misses, the input's end" do
      # "id" and "url" are followed by one of several keys in turn (the first and second guesses, then neither);
      # some keys differ from a predicted one in their last byte, length or an escape; the last key ends the input.
      kinds = [
        [{"id", 1}, {"login", "a"}, {"url", "u"}, {"avatar_url", "v"}],
        [{"id", 2}, {"name", "r"}, {"url", "w"}],
        [{"id", 3}, {"type", "t"}, {"url", "x"}, {"names", 1}],
        [{"id", 4}, {"nam", 2}, {"url", "y"}, {"nam\\u0065", 3}],
        [{"id", 5}, {"name", "s"}, {"urk", 0}]
      ]

      pairs = for i <- 1..60, do: Enum.at(kinds, rem(i * 7, 5))

      text = fn
        {k, v} when is_binary(v) -> ~s("#{k}":"#{v}")
        {k, v} -> ~s("#{k}":#{v})
      end

      nested =
        Enum.map(pairs, fn ps -> ~s({"actor":{) <> Enum.map_join(ps, ",", text) <> "}}" end)

      json = "[" <> Enum.join(nested, ",") <> ~s(,{"id":0,"name":0}])

      unescape = fn k -> String.replace(k, "\\u0065", "e") end

      expected =
        Enum.map(pairs, fn ps -> %{"actor" => Map.new(ps, fn {k, v} -> {unescape.(k), v} end)} end) ++
          [%{"id" => 0, "name" => 0}]

      assert byte_size(json) > 512

      for opts <- [[], [keys: :intern], [keys: :copy], [keys: :intern, strings: :copy]] do
        assert RustyJson.decode!(json, opts) == expected, inspect(opts)
      end
    end

    test "intern shares keys tuples between same-shaped objects, even alternating ones" do
      # Outer and inner objects alternate; key orders differ; one key is long, one escaped, one shape repeats a
      # key (the first wins) and one has more keys than a flat map holds.
      inner = fn i -> ~s({"y":#{i},"x":"#{String.duplicate("v", rem(i, 30))}"}) end
      long = String.duplicate("long_key_", 4)
      wide = Enum.map_join(1..40, ",", &~s("w#{&1}":#{&1}))

      objects =
        for i <- 1..200 do
          case rem(i, 4) do
            0 -> ~s({"b":#{i},"a":#{inner.(i)},"#{long}":null})
            1 -> ~s({"a":#{i},"b":#{inner.(i)},"\u0063":[#{i}]})
            2 -> ~s({"a":1,"a":#{i},"b":2})
            3 -> "{" <> wide <> "}"
          end
        end

      json = "[" <> Enum.join(objects, ",") <> "]"
      interned = RustyJson.decode!(json, keys: :intern)

      for ref <- Reference.names() do
        dups = Reference.duplicate_keys(ref)
        expected = Reference.decode!(ref, json) |> Enum.map(&first_wins(&1, dups))
        assert interned == expected, "as #{ref}"
        assert RustyJson.decode!(json) == expected
        assert RustyJson.decode!(json, keys: :copy) == expected
        assert RustyJson.decode!(json, strings: :copy) == expected
      end

      # Shared key terms and tuples: far fewer words than the same term unshared. (Keys tuples are shared where
      # the NIF writes flat maps itself: the `flat_maps` fast path, off under RUSTYJSON_FAST_PATHS=off.)
      limit = if RustyJson.Native.info().fast_paths.flat_maps, do: 0.6, else: 0.8
      assert :erts_debug.size(interned) < limit * :erts_debug.flat_size(interned)
    end

    test "intern shares keys and keys tuples across wide objects and across a detached decode's slices" do
      # Keys that differ in one byte (field_10..field_19 once shared one cache slot, so objects of 15 or more
      # keys lost interning), first objects as wide as the cache's first window, and a document long enough
      # for the detached decode to yield between slices (the cache goes on with the next slice).
      # The last document (~1.2 MB) is decoded detached, in several ~0.5 ms slices (32 KiB at least each).
      for {k, n} <- [{15, 200}, {16, 200}, {20, 200}, {32, 200}, {20, 4_000}] do
        objects =
          for i <- 1..n, do: "{" <> Enum.map_join(0..(k - 1), ",", &~s("field_#{&1}":#{i})) <> "}"

        json = "[" <> Enum.join(objects, ",") <> "]"
        assert RustyJson.decode!(json, keys: :intern) == RustyJson.decode!(json)

        # Per object, words no sharing saves: its flat map (header, size, keys pointer, k values) and a list cell.
        # The rest is keys and keys tuples, measured against the same result unshared (flat_size). Shared keys
        # in per-object tuples leave about a quarter of it ((k + 1) words of 4k + 1); shared keys and tuples leave
        # one copy (~1%).
        nodes = n * (k + 5)

        left = fn ->
          interned = RustyJson.decode!(json, keys: :intern)
          (:erts_debug.size(interned) - nodes) / (:erts_debug.flat_size(interned) - nodes)
        end

        # A scheduler thread's first `keys: :intern` decode can share less (on OTP 25: up to ~19% left at k=15
        # and 16); later ones on that thread share fully. So that nothing earlier calls left behind matters,
        # decode up to once per scheduler thread and once more: at least one decode then runs on a thread that
        # has decoded with `keys: :intern` before.
        threads = :erlang.system_info(:schedulers) + :erlang.system_info(:dirty_cpu_schedulers)

        # Stops at the first decode that shares what this VM can share (each try walks the whole result twice).
        enough = if RustyJson.Native.info().fast_paths.flat_maps, do: 0.05, else: 1 / 3

        best =
          Enum.reduce_while(1..(threads + 1), 1.0, fn _, best ->
            best = min(best, left.())
            if best < enough, do: {:halt, best}, else: {:cont, best}
          end)

        left = "k=#{k} n=#{n}: #{Float.round(best * 100, 1)}% of the keys' words left"
        assert best < 1 / 3, "keys not shared: " <> left

        if RustyJson.Native.info().fast_paths.flat_maps,
          do: assert(best < 0.05, "keys shared, keys tuples not shared: " <> left)
      end
    end

    test "intern's expected keys: prefixes, every length, escapes, spacing and the end of the input" do
      # keys: :intern expects the key that followed the previous one last time and checks the input's next 16
      # bytes against it. Random objects over keys that are prefixes of each other, of lengths 0 to 16, escaped
      # forms and spacing around the colon, in mostly repeating orders: every decode must equal the default's.
      :rand.seed(:exsss, {7, 11, 13})
      base = for n <- [0, 1, 2, 7, 8, 13, 14, 15, 16], do: String.duplicate("k", n)
      pool = base ++ ["kj", ~S(k\u006b), ~S(\u006bk), "ké", ~S(k\"q)]
      orders = for _ <- 1..4, do: Enum.take_random(pool, 6)

      object = fn ->
        keys =
          if :rand.uniform(5) == 1,
            do: Enum.take_random(pool, :rand.uniform(6)),
            else: Enum.random(orders)

        body =
          Enum.map_join(keys, ",", fn k ->
            colon = Enum.random([":", " :", ": ", "\n:\t"])
            ~s("#{k}"#{colon}#{:rand.uniform(9)})
          end)

        "{" <> body <> "}"
      end

      for round <- 1..150 do
        json = "[" <> Enum.map_join(1..:rand.uniform(40), ",", fn _ -> object.() end) <> "]"
        expected = RustyJson.decode!(json)
        assert RustyJson.decode!(json, keys: :intern) == expected, "round #{round}: #{json}"
        # The same objects ending at the input's last bytes (no 16 bytes left for the last keys).
        tail = json <> ~s(   )
        assert RustyJson.decode!(tail, keys: :intern) == expected

        # With the other options too: ordered objects keep every pair in order, duplicates included.
        for opts <- [[objects: :ordered_objects], [strings: :copy]] do
          assert RustyJson.decode!(json, [{:keys, :intern} | opts]) ==
                   RustyJson.decode!(json, opts)
        end
      end
    end

    test "atoms and atoms!" do
      assert RustyJson.decode!(~s({"foo":{"bar":1}}), keys: :atoms) == %{foo: %{bar: 1}}
      assert RustyJson.decode!(~s({"héllo":1}), keys: :atoms) == %{héllo: 1}
      assert RustyJson.decode!(~s({"foo":1}), keys: :atoms!) == %{foo: 1}
      assert RustyJson.decode!(~s({"\\u00e9t\\u00e9":1}), keys: :atoms) == %{été: 1}
    end

    test "atoms! raises ArgumentError for an unknown atom and creates none" do
      key = "rusty_json_never_an_atom_#{System.unique_integer([:positive])}"

      assert_raise ArgumentError, fn -> RustyJson.decode(~s({"#{key}":1}), keys: :atoms!) end
      assert_raise ArgumentError, fn -> RustyJson.decode!(~s({"#{key}é":1}), keys: :atoms!) end
      assert_raise ArgumentError, fn -> String.to_existing_atom(key) end
    end

    test "an atom key over 255 characters raises as String.to_atom/1 does" do
      long = String.duplicate("a", 256)
      assert_raise SystemLimitError, fn -> RustyJson.decode!(~s({"#{long}":1}), keys: :atoms) end
      long_utf8 = String.duplicate("é", 256)

      assert_raise SystemLimitError, fn ->
        RustyJson.decode!(~s({"#{long_utf8}":1}), keys: :atoms)
      end
    end

    test "a key function sees every key, nested and in ordered objects; first equal key wins" do
      assert RustyJson.decode!(~s({"a":1,"A":2,"b":{"c":[{"d":1}]}}), keys: &String.upcase/1) ==
               %{"A" => 1, "B" => %{"C" => [%{"D" => 1}]}}

      {:ok, agent} = Agent.start_link(fn -> [] end)

      fun = fn k ->
        Agent.update(agent, &[k | &1])
        String.to_atom(k)
      end

      assert RustyJson.decode!(~s({"x":{"y":1},"z":2}), keys: fun) == %{x: %{y: 1}, z: 2}
      # Jason's order: a key once its pair is complete, so a value's keys before its own.
      assert Agent.get(agent, &Enum.reverse/1) == ["y", "x", "z"]

      assert RustyJson.decode!(~s({"b":1,"a":2,"b":3}),
               keys: &String.upcase/1,
               objects: :ordered_objects
             ) == %OrderedObject{values: [{"B", 1}, {"A", 2}, {"B", 3}]}
    end
  end

  describe "strings" do
    test "reference and copy" do
      long = String.duplicate("x", 200)
      json = ~s(["#{long}", "a\\nb"])

      for strings <- [:reference, :copy] do
        assert RustyJson.decode!(json, strings: strings) == [long, "a\nb"]
      end

      [ref] = RustyJson.decode!(~s(["#{long}"]))
      [copy] = RustyJson.decode!(~s(["#{long}"]), strings: :copy)
      # A referenced string is a sub-binary of the input; a copied one stands alone.
      assert :binary.referenced_byte_size(ref) > byte_size(ref)
      assert :binary.referenced_byte_size(copy) == byte_size(copy)
    end

    # Strings of up to 24 bytes are copied on every release; up to 64 from OTP 27 on, where the VM's own sub-binaries
    # of that size are copies (`enif_make_sub_binary` refers to the input before). A copy keeps nothing of the
    # input alive; a longer string refers to the input.
    test "a string is copied or refers to the input by its length and the release" do
      copies_up_to = if String.to_integer(System.otp_release()) >= 27, do: 64, else: 24

      for len <- [1, 8, 24, 25, 40, 63, 64, 65, 100], key? <- [false, true] do
        text = String.duplicate("s", len)
        # An input too long for the process heap (a refc binary, as request bodies are).
        padding = String.duplicate("p", 600)

        json =
          if key?, do: ~s([{"#{text}": 1}, "#{padding}"]), else: ~s(["#{padding}", "#{text}"])

        [first, second] = RustyJson.decode!(json)
        string = if key?, do: hd(Map.keys(first)), else: second
        assert string == text

        # As the VM counts it (OTP 27 gives a heap binary's size in bits).
        expected =
          if len <= copies_up_to,
            do: :binary.referenced_byte_size(:binary.copy(text)),
            else: :binary.referenced_byte_size(json)

        assert :binary.referenced_byte_size(string) == expected, "#{len} bytes, key: #{key?}"
      end
    end

    # Escaped strings longer than a heap binary are unescaped into a binary shared by the call's others, at most
    # 4 KiB and never larger than the input (what a kept one holds: issue #57); one past 1 KiB that does not fit
    # the shared binary's rest, one past 4 KiB, and every one with `strings: :copy`, has its own.
    test "escaped strings share a binary no larger than the input or 4 KiB" do
      for {count, len} <- [{1, 80}, {3, 100}, {2_000, 150}, {40, 5_000}, {3, 4_000}, {50, 1_000}] do
        texts = for i <- 1..count, do: String.duplicate("é", div(len, 2) - 4) <> "\t\"#{i}"
        json = RustyJson.encode!(texts)
        decoded = RustyJson.decode!(json)
        assert decoded == texts

        # A string on its own, as the VM counts it (OTP 27 gives a heap binary's size in bits).
        alone = Enum.map(texts, &:binary.referenced_byte_size(:binary.copy(&1)))
        held = Enum.map(decoded, &:binary.referenced_byte_size/1)

        if len > 1_024 do
          assert held == alone
        else
          assert Enum.all?(held, &(&1 <= min(byte_size(json), 4_096)))
          # Shared: fewer binaries than strings once there are several.
          if count > 1, do: assert(Enum.any?(held, &(&1 > len)))
        end

        copied = RustyJson.decode!(json, strings: :copy)
        assert copied == texts
        assert Enum.map(copied, &:binary.referenced_byte_size/1) == alone
      end
    end
  end

  describe "objects" do
    test "ordered objects keep order and duplicates, nested" do
      assert RustyJson.decode!(~s({"b":1,"a":{"z":1,"y":2},"b":[{}]}), objects: :ordered_objects) ==
               %OrderedObject{
                 values: [
                   {"b", 1},
                   {"a", %OrderedObject{values: [{"z", 1}, {"y", 2}]}},
                   {"b", [%OrderedObject{values: []}]}
                 ]
               }
    end

    test "duplicate keys: the first wins, for small and large objects" do
      assert RustyJson.decode!(~s({"a":1,"b":2,"a":3})) == %{"a" => 1, "b" => 2}
      pairs = Enum.map_join(1..40, ",", &~s("k#{&1}":#{&1})) <> ~s(,"k1":"dup")
      map = RustyJson.decode!("{" <> pairs <> "}")
      assert map_size(map) == 40 and map["k1"] == 1
    end

    test "duplicate keys in large objects: the first wins, whatever the pattern and key option" do
      # Large objects with duplicates are rebuilt from their pairs in reverse (the runtime keeps the last of
      # equal keys); the reference is Map.put_new over the pairs in document order.
      :rand.seed(:exsss, {3, 1, 4})

      for n <- [33, 34, 100, 1000, 5000], distinct <- [1, 2, div(n, 2), n - 1] do
        pairs = for i <- 1..n, do: {"k#{:rand.uniform(distinct)}", i}
        json = "{" <> Enum.map_join(pairs, ",", fn {k, v} -> ~s("#{k}":#{v}) end) <> "}"
        expected = Enum.reduce(pairs, %{}, fn {k, v}, acc -> Map.put_new(acc, k, v) end)

        for opts <- [[], [keys: :intern], [keys: :copy], [strings: :copy]] do
          assert RustyJson.decode!(json, opts) == expected,
                 "n=#{n} distinct=#{distinct} #{inspect(opts)}"
        end

        atoms = Map.new(expected, fn {k, v} -> {String.to_atom(k), v} end)
        assert RustyJson.decode!(json, keys: :atoms) == atoms
      end
    end

    test "an object of 200,000 keys whose last key repeats the first decodes to the first's value" do
      json = "{" <> Enum.map_join(1..200_000, ",", &~s("k#{&1}":#{&1})) <> ~s(,"k1":0})
      map = RustyJson.decode!(json)
      assert map_size(map) == 200_000 and map["k1"] == 1 and map["k200000"] == 200_000
    end

    test "maps of every size up to and past the flatmap limit equal Map.new" do
      for n <- [1, 2, 3, 31, 32, 33, 100] do
        keys = Enum.shuffle(Enum.map(1..n, &"key#{&1}"))
        json = "{" <> Enum.map_join(keys, ",", &~s("#{&1}":"#{&1}")) <> "}"
        assert RustyJson.decode!(json) == Map.new(keys, &{&1, &1})
      end
    end
  end

  describe "floats" do
    test ":native is the default; :decimals needs the Decimal library" do
      assert RustyJson.decode!("1.5", floats: :native) == 1.5

      refute Code.ensure_loaded?(Decimal)

      assert_raise ArgumentError,
                   "decimal library not found, :decimals option not available",
                   fn ->
                     RustyJson.decode!("1.5", floats: :decimals)
                   end
    end

    test "the NIF builds Decimal.new/1's struct for float tokens when asked (bit 5)" do
      decimal = fn sign, coef, exp -> %{__struct__: Decimal, sign: sign, coef: coef, exp: exp} end

      assert RustyJson.Native.decode("[1.50, -0.0, 1e5, 2.5E-3, 12345678901234567890.1]", 32) == [
               decimal.(1, 150, -2),
               decimal.(-1, 0, -1),
               decimal.(1, 10, 4),
               decimal.(1, 25, -4),
               decimal.(1, 123_456_789_012_345_678_901, -1)
             ]

      # Only native floats have a range: Jason's `Decimal.new("1.0e400")` succeeds.
      assert RustyJson.Native.decode("1e400", 32) == decimal.(1, 10, 399)
      assert RustyJson.Native.decode("1e400", 0) == {:error, {0, "1e400"}}
    end
  end

  describe "option validation" do
    test "a bad value raises ArgumentError naming the option and the allowed values" do
      for {opt, value} <- [keys: :nope, strings: :nope, objects: :nope, floats: :nope] do
        error = assert_raise ArgumentError, fn -> RustyJson.decode("{}", [{opt, value}]) end
        assert error.message =~ inspect(opt)
        assert error.message =~ "allowed"
      end
    end

    test "unknown options are ignored, as in Jason" do
      assert RustyJson.decode("[1]", foo: :bar) == {:ok, [1]}
    end

    test "options as a map, in every entry point, as decode/2 takes them" do
      json = ~s({"a":[1.5]})
      expected = %{a: [1.5]}
      assert RustyJson.decode(json, %{keys: :atoms}) == {:ok, expected}
      assert RustyJson.decode!(json, %{keys: :atoms, strings: :copy}) == expected
      assert RustyJson.decode(json, %{}) == {:ok, %{"a" => [1.5]}}

      for fun <- [&RustyJson.Stream.decode_documents/2, &RustyJson.Stream.decode_array/2] do
        input = if fun == (&RustyJson.Stream.decode_array/2), do: "[#{json}]", else: json
        assert input |> List.wrap() |> fun.(%{keys: :atoms}) |> Enum.to_list() == [expected]
      end

      assert_raise ArgumentError, ~r/:keys decode option/, fn ->
        RustyJson.decode(json, %{keys: :nope})
      end
    end

    test "any other form raises ArgumentError naming it, in every entry point" do
      for {opts, message} <- [
            {{:keys, :atoms}, "invalid decode options: {:keys, :atoms}"},
            {:atoms, "invalid decode options: :atoms"},
            {"keys", ~s(invalid decode options: "keys")},
            {[:atoms], "invalid decode option: :atoms"},
            {[{:keys, :atoms}, :strings], "invalid decode option: :strings"},
            {[:a, :b], "invalid decode options: [:a, :b]"}
          ] do
        message = message <> "; expected a keyword list or a map of options"
        assert_raise ArgumentError, message, fn -> RustyJson.decode("[]", opts) end
        assert_raise ArgumentError, message, fn -> RustyJson.decode!("[]", opts) end
        # Raised when the stream is made, not when it is first read.
        assert_raise ArgumentError, message, fn -> RustyJson.Stream.decode_documents([], opts) end
        assert_raise ArgumentError, message, fn -> RustyJson.Stream.decode_array([], opts) end
      end
    end
  end

  describe "input" do
    test "integers around the small-integer and 64-bit limits (written directly or by the VM)" do
      # Small integers: 60 bits on a 64-bit VM, 28 on a 32-bit one.
      limit = Bitwise.bsl(1, :erlang.system_info(:wordsize) * 8 - 5)

      ints = [
        0,
        -1,
        limit - 1,
        limit,
        -limit,
        -limit - 1,
        Bitwise.bsl(1, 63) - 1,
        -Bitwise.bsl(1, 63)
      ]

      ints = ints ++ [Bitwise.bsl(1, 63), Bitwise.bsl(1, 64) + 1, -Bitwise.bsl(1, 63) - 1]

      assert RustyJson.decode!("[" <> Enum.map_join(ints, ",", &Integer.to_string/1) <> "]") ==
               ints
    end

    test "iodata is flattened; errors carry the flattened data" do
      assert RustyJson.decode(["[1,", ?2, ["]"]]) == {:ok, [1, 2]}
      assert {:error, %DecodeError{position: 3, data: "[1,]"}} = RustyJson.decode(["[1,", "]"])
      assert RustyJson.decode!(["{", ~s("a"), ":1}"], keys: :atoms) == %{a: 1}
    end

    test "large inputs go through the detached decode with the same results" do
      big = "[" <> Enum.map_join(1..40_000, ",", &~s({"i":#{&1},"s":"v#{&1}"})) <> "]"
      assert byte_size(big) > 65_536
      decoded = RustyJson.decode!(big)
      assert length(decoded) == 40_000 and List.last(decoded) == %{"i" => 40_000, "s" => "v40000"}

      assert {:error, %DecodeError{position: p}} = RustyJson.decode(big <> "x")
      assert p == byte_size(big)
    end
  end

  describe "nesting" do
    @depth 1_000_000

    test "1,000,000-deep arrays and objects decode without native recursion" do
      arrays = String.duplicate("[", @depth) <> String.duplicate("]", @depth)
      assert depth(RustyJson.decode!(arrays), 0) == @depth

      objects = String.duplicate(~s({"a":), @depth) <> "1" <> String.duplicate("}", @depth)
      assert depth(RustyJson.decode!(objects), 0) == @depth
    end

    test "1,000,000-deep unclosed input fails cleanly" do
      assert {:error, %DecodeError{position: @depth}} =
               RustyJson.decode(String.duplicate("[", @depth))

      assert {:error, %DecodeError{position: p}} =
               RustyJson.decode(String.duplicate(~s({"a":), @depth))

      assert p == @depth * 5
    end

    test "100-deep single-entry nesting" do
      json = String.duplicate(~s({"l":[), 100) <> "1" <> String.duplicate("]}", 100)
      assert depth(RustyJson.decode!(json), 0) == 200
    end
  end

  defp depth([x], acc), do: depth(x, acc + 1)
  defp depth([], acc), do: acc + 1
  defp depth(%{} = m, acc) when map_size(m) == 1, do: depth(m |> Map.values() |> hd(), acc + 1)
  defp depth(_, acc), do: acc
end
