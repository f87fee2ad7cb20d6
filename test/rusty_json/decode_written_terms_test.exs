defmodule RustyJson.DecodeWrittenTermsTest do
  # Short binaries, flat maps and their keys tuples are written by the NIF into blocks of memory taken from the
  # VM (`native/rustyjson_nif/src/term/write.rs`), the unused rest of each block left as a tuple. The terms must
  # be ordinary terms for everything the VM does with them afterwards.
  use ExUnit.Case, async: true

  defp value(seed, depth) do
    :rand.seed(:exsss, {seed, depth, 7})
    build(depth)
  end

  defp build(0), do: scalar()

  defp build(depth) do
    case :rand.uniform(4) do
      1 -> for _ <- 1..:rand.uniform(8), do: build(depth - 1)
      2 -> Map.new(1..:rand.uniform(40), fn i -> {key(i), build(depth - 1)} end)
      _ -> scalar()
    end
  end

  # Keys and strings across the written sizes (up to 24 bytes) and the VM's heap binary limit (64).
  defp key(i), do: String.duplicate("k", rem(i * 7, 30)) <> Integer.to_string(i)

  defp scalar do
    case :rand.uniform(5) do
      1 -> :rand.uniform(1_000_000) - 500_000
      2 -> String.duplicate("é", :rand.uniform(40))
      3 -> String.duplicate("x", :rand.uniform(70) - 1)
      4 -> nil
      5 -> :rand.uniform() * 1000
    end
  end

  test "decoded terms survive garbage collection, messages and the external format" do
    cases =
      for seed <- 1..60, keys <- [:strings, :intern] do
        value = value(seed, rem(seed, 4) + 1)
        {value, RustyJson.decode!(RustyJson.encode!(value), keys: keys)}
      end

    :erlang.garbage_collect()
    parent = self()
    pid = spawn(fn -> receive(do: ({:terms, t} -> send(parent, {:back, t}))) end)
    send(pid, {:terms, cases})
    assert_receive {:back, copies}

    for {{value, decoded}, {_, copy}} <- Enum.zip(cases, copies) do
      assert decoded == value
      assert copy == value
      assert :erlang.binary_to_term(:erlang.term_to_binary(decoded)) == value
      assert :erlang.phash2(decoded) == :erlang.phash2(value)
    end

    :erlang.garbage_collect()
    assert Enum.all?(cases, fn {value, decoded} -> decoded == value end)
  end

  # Blocks come straight from the process heap when it has room (`env_heap`) and from heap fragments when it has
  # none; the unused rest of a block goes back to the heap or stays a tuple. Both, in processes whose heaps have
  # no room (the default size) and plenty (a large minimum), decoding one document after another.
  test "decoded terms are whole whether the heap had room for them or not" do
    docs = for seed <- 1..40, do: value(seed, rem(seed, 4) + 1)

    for min_heap_size <- [1, 50_000] do
      parent = self()

      :erlang.spawn_opt(
        fn ->
          decoded = for v <- docs, do: RustyJson.decode!(RustyJson.encode!(v))
          :erlang.garbage_collect()

          again =
            for v <- docs,
                do: {RustyJson.decode!(RustyJson.encode!(v)), :erlang.garbage_collect()}

          send(parent, {:decoded, decoded, Enum.map(again, &elem(&1, 0))})
        end,
        [{:min_heap_size, min_heap_size}]
      )

      assert_receive {:decoded, decoded, again}
      assert decoded == docs
      assert again == docs
    end
  end

  # Small integers hold 60 bits on a 64-bit VM and 28 on a 32-bit one (armhf: make test-armhf); floats take one
  # data word or two; heap binaries 8 or 16 data words at most. Both VMs' limits are crossed on either VM: a
  # value written directly must be the term the VM makes, one past the limit a bignum.
  test "integers, floats and short strings around both word sizes' limits" do
    ints =
      for bits <- [27, 31, 59, 63], limit = Bitwise.bsl(1, bits), d <- [-1, 0, 1] do
        [limit + d, -limit - d]
      end

    ints = List.flatten([0, -1, 7 | ints])
    floats = [0.0, -0.0, 1.5, -2.25e-300, 1.0e308, 2.2250738585072014e-308, 5.0e-324, 123_456.789]
    strings = for n <- 0..66, do: String.duplicate("s", n)
    value = %{"ints" => ints, "floats" => floats, "strings" => strings}

    for keys <- [:strings, :intern] do
      decoded = RustyJson.decode!(RustyJson.encode!(value), keys: keys)
      assert decoded == value
      assert Enum.map(decoded["floats"], &<<&1::float>>) == Enum.map(floats, &<<&1::float>>)

      assert Enum.map(decoded["ints"], &:erts_debug.flat_size/1) ==
               Enum.map(ints, &:erts_debug.flat_size/1)

      assert :erlang.binary_to_term(:erlang.term_to_binary(decoded)) == value
    end

    assert RustyJson.encode!(ints) == "[" <> Enum.map_join(ints, ",", &Integer.to_string/1) <> "]"
  end
end
