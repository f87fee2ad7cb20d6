defmodule RustyJson.BitOffsetInputsTest do
  # Binaries that start at a bit offset (bit-level matching makes them: `<<_::3, x::binary-size(n), _::5>>`)
  # must give every entry the same term, error and position as their aligned copies. erl_nif reads such a binary
  # through a copy that lasts one NIF call; a call that spans several must read one aligned copy made once (the
  # NIF checks that every slice finds the bytes where the first did, so a copy per slice would be an error here,
  # not a silent re-read), and that copy is counted: one per call at most, whatever the size.
  #
  # Not async: the copy counter is global to the VM.
  use ExUnit.Case, async: false

  alias RustyJson.{DecodeError, Native}
  alias RustyJson.Test.{JsonGen, StreamRun}

  # `bin` starting `k` bits into a new binary (k in 1..7): equal to `bin`, and at a bit offset. One clause per k,
  # literal sizes: Elixir 1.20 warns on a variable in size(...) from outside the match, and 1.14 has no pin there.
  for k <- 1..7 do
    defp at_offset(bin, unquote(k)) do
      <<_::unquote(k), x::bitstring>> = <<0::unquote(k), bin::binary>>
      x
    end
  end

  defp records(n) do
    %{
      "b_first" => 1,
      "a_list" =>
        for(i <- 1..n, do: %{"id" => i, "name" => "user \"#{i}\" é", "tags" => ["a", "b"]}),
      "c_key" =>
        "value with a long enough text to be referenced, not copied: #{String.duplicate("x", 70)}",
      "a" => %{"q" => 1.5, "r" => [true, false, nil]}
    }
  end

  # One NIF call (~1 KB), several on the caller's heap (an object of 3,000 keys under 64 KiB, whose build a normal
  # slice leaves to a dirty one), and many slices detached from the caller's heap (~1.6 MB).
  defp documents do
    wide = Map.new(1..3_000, fn i -> {"key#{i}", i} end)

    [
      small: RustyJson.encode!(records(10)),
      wide: RustyJson.encode!(wide),
      large: RustyJson.encode!(records(25_000))
    ]
  end

  @option_sets [
    [],
    [keys: :atoms],
    [keys: :atoms!],
    [keys: :copy],
    [keys: :intern],
    [keys: &String.upcase/1],
    [strings: :copy],
    [objects: :ordered_objects],
    [duplicate_keys: :last],
    [duplicate_keys: :error],
    [max_depth: 8, decoding_integer_digit_limit: 20]
  ]

  defp copies_during(fun) do
    before = Native.aligned_copies()
    result = fun.()
    {result, Native.aligned_copies() - before}
  end

  test "the probe tells an input at a bit offset from an aligned one, at any size" do
    # Matching copies a part of up to 64 bytes into a binary of its own (aligned): only larger ones keep the offset.
    for size <- [65, 127, 128, 129, 100_000], k <- 1..7 do
      bin = :binary.copy(String.duplicate("a", size))
      assert Native.at_bit_offset?(at_offset(bin, k))
      refute Native.at_bit_offset?(bin)
      aligned = Native.aligned(at_offset(bin, k))
      assert aligned == bin
      refute Native.at_bit_offset?(aligned)
      assert Native.aligned(bin) == bin
    end
  end

  test "decode/2 gives the aligned input's term with every option set, at every bit offset" do
    for {name, json} <- documents(), opts <- @option_sets do
      expected = RustyJson.decode(json, opts)
      assert {:ok, _} = expected

      for k <- 1..7 do
        {result, copies} = copies_during(fn -> RustyJson.decode(at_offset(json, k), opts) end)
        assert result == expected, "#{name} at bit #{k} with #{inspect(opts)}"
        # A document read in one call needs no copy; one read in several calls, one.
        assert copies <= 1
        if name == :small, do: assert(copies == 0)
      end
    end
  end

  test "a decode in many slices makes one aligned copy, and an aligned input none" do
    json = RustyJson.encode!(records(25_000))
    {_, none} = copies_during(fn -> RustyJson.decode!(json) end)
    assert none == 0

    for k <- 1..7 do
      {term, copies} = copies_during(fn -> RustyJson.decode!(at_offset(json, k)) end)
      assert copies == 1
      assert Map.keys(term) == ["a", "a_list", "b_first", "c_key"]
      assert length(term["a_list"]) == 25_000
    end
  end

  test "the heap decode started over on an aligned copy when it must yield (an object built on a dirty slice)" do
    json = RustyJson.encode!(Map.new(1..3_000, fn i -> {"key#{i}", "v#{i}"} end))
    assert byte_size(json) < 65_536
    expected = RustyJson.decode!(json)

    for k <- 1..7, opts <- [[], [keys: :intern], [strings: :copy]] do
      {term, copies} = copies_during(fn -> RustyJson.decode!(at_offset(json, k), opts) end)
      assert term == expected
      assert copies == 1
    end
  end

  test "errors and their positions are the aligned input's" do
    for {_name, json} <- documents(),
        bad <- [json <> " x", binary_part(json, 0, byte_size(json) - 2), "[" <> json <> ",]"] do
      {:error, %DecodeError{} = expected} = RustyJson.decode(bad)

      for k <- 1..7 do
        assert {:error, error} = RustyJson.decode(at_offset(bad, k))

        assert {error.position, error.token, error.data} ==
                 {expected.position, expected.token, bad}

        assert_raise DecodeError, fn -> RustyJson.decode!(at_offset(bad, k)) end
      end
    end
  end

  test "get/3 gives the aligned input's values and errors, at every bit offset" do
    pointers = ["/a_list/9/name", "/c_key", "/a", "/a_list/0/tags/1", "/missing"]

    for {name, json} <- documents(), name != :wide, opts <- @option_sets do
      expected = RustyJson.get(json, pointers, [default: :none] ++ opts)
      assert {:ok, [_ | _]} = expected

      for k <- 1..7 do
        {result, copies} =
          copies_during(fn ->
            RustyJson.get(at_offset(json, k), pointers, [default: :none] ++ opts)
          end)

        assert result == expected, "#{name} at bit #{k} with #{inspect(opts)}"
        assert copies <= 1
      end
    end

    json = RustyJson.encode!(records(25_000))
    bad = json <> "]"
    {:error, expected} = RustyJson.get(bad, "/c_key")

    for k <- 1..7 do
      assert {:error, error} = RustyJson.get(at_offset(bad, k), "/c_key")
      assert error.position == expected.position
    end
  end

  test "streams of chunks at bit offsets give the aligned chunks' items and errors" do
    lines =
      Enum.map_join(1..3_000, "\n", fn i ->
        RustyJson.encode!(%{"id" => i, "text" => "line \"#{i}\""})
      end)

    array = RustyJson.encode!(%{"meta" => 1, "data" => Enum.to_list(1..20_000)})

    for {text, run} <- [
          {lines, &RustyJson.Stream.decode_documents/1},
          {lines <> "\n{]", &RustyJson.Stream.decode_documents/1},
          {array, &RustyJson.Stream.decode_array(&1, at: "/data")}
        ],
        cuts <- [[], [7, 100, 5_000], Enum.to_list(1_000..byte_size(text)//9_999)] do
      chunks = StreamRun.pieces(text, cuts)
      expected = StreamRun.run(run.(chunks))
      assert length(expected) > 1

      for k <- [1, 4, 7] do
        assert StreamRun.run(run.(Enum.map(chunks, &at_offset(&1, k)))) == expected
      end
    end
  end

  test "the Formatter lays out an input at a bit offset as its aligned copy" do
    for {_name, json} <- documents(), k <- 1..7 do
      x = at_offset(json, k)
      assert RustyJson.Formatter.pretty_print(x) == RustyJson.Formatter.pretty_print(json)
      assert RustyJson.Formatter.minimize(x) == RustyJson.Formatter.minimize(json)
    end
  end

  test "strings and keys at bit offsets inside terms encode as their bytes, in every mode" do
    text = "text \"quoted\" \\ é \u2028 <tag> & \u{1F600}\n"

    for size <- [1, 3, 200, 20_000], k <- 1..7 do
      strings = for i <- 1..size, do: at_offset("#{i} #{text}", k)
      keys = Map.new(Enum.take(strings, 2_000), &{&1, &1})

      term = %{
        "strings" => strings,
        "map" => keys,
        "long" => at_offset(String.duplicate(text, size), k)
      }

      aligned = %{
        "strings" => Enum.map(strings, &:binary.copy/1),
        "map" => Map.new(keys, fn {a, b} -> {:binary.copy(a), :binary.copy(b)} end),
        "long" => :binary.copy(term["long"])
      }

      for opts <- [
            [],
            [escape: :html_safe],
            [escape: :unicode_safe],
            [escape: :javascript_safe],
            [pretty: true],
            [maps: :strict, sort_keys: true]
          ] do
        assert RustyJson.encode!(term, opts) == RustyJson.encode!(aligned, opts)
      end
    end
  end

  test "property: random documents at a random bit offset decode and get as their aligned copies" do
    prop =
      :proper.forall({JsonGen.value(4), :proper_types.integer(1, 7)}, fn {term, k} ->
        json = RustyJson.encode!(term)
        x = at_offset(json, k)

        RustyJson.decode(x) == RustyJson.decode(json) and
          RustyJson.decode(x, keys: :intern, strings: :copy) ==
            RustyJson.decode(json, keys: :intern, strings: :copy) and
          RustyJson.get(x, "") == RustyJson.get(json, "") and
          RustyJson.Formatter.pretty_print(x) == RustyJson.Formatter.pretty_print(json)
      end)

    assert JsonGen.check(prop, 300, 400) == true
  end
end
