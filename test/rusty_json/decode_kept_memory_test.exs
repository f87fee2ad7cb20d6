defmodule RustyJson.DecodeKeptMemoryTest do
  # What the NIF keeps between calls on each scheduler thread (large-object shapes, key caches, the parser's
  # stacks) is bounded in bytes, not only in entries. Objects of 33-256 keys used to copy their keys' bytes into
  # kept shape slots: 40 keys of 100 KB, other keys each call, kept 4 MB a slot, 64 MB a thread (the VM died on
  # the 11th call of such 2.5 MB keys under a 4 GB limit). The NIF allocator's count (`allocator_reset_peak/0`:
  # the bytes everything Rust allocates holds) must stay put over such calls.
  # Not async: that count is the whole VM's.
  use ExUnit.Case, async: false

  @mib 1_048_576
  @calls 50

  # An object of `n` keys of about `key_bytes` bytes, other keys for each `call`.
  defp huge_keys_object(call, n \\ 40, key_bytes \\ 100_000) do
    "{" <>
      Enum.map_join(1..n, ",", fn i -> ~s("#{huge_key(i, call, key_bytes)}":#{i}) end) <> "}"
  end

  defp huge_key(i, call, key_bytes), do: :binary.copy("k", key_bytes) <> "#{i}_#{call}"

  # The bytes the NIF's allocator holds: the least of three readings, each after a collection (a detached
  # decode's continuation is freed when collected).
  defp native_held do
    Enum.min(
      for _ <- 1..3 do
        :erlang.garbage_collect()
        RustyJson.Native.allocator_reset_peak()
      end
    )
  end

  test "decoding #{@calls} objects of 40 distinct 100 KB keys keeps no more native memory" do
    # Warm-up: the threads' kept state at its working size.
    for call <- 1..4, do: RustyJson.decode!(huge_keys_object(-call))
    before = native_held()

    for call <- 1..@calls do
      assert map_size(RustyJson.decode!(huge_keys_object(call))) == 40
    end

    grown = native_held() - before
    assert grown < 4 * @mib, "the NIF keeps #{grown} bytes more after #{@calls} decodes"
  end

  test "large objects of keys up to the kept bound (128 bytes) equal the VM's maps" do
    # Objects of 40 keys of 120 bytes, the same keys each time: equal to the VM's own maps.
    keys = for i <- 1..40, do: String.duplicate("k", 118) <> "#{i + 10}"
    json = "[" <> Enum.map_join(1..20, ",", fn r -> object(keys, r) end) <> "]"
    decoded = RustyJson.decode!(json)

    for {map, r} <- Enum.with_index(decoded, 1) do
      assert map == Map.new(keys, &{&1, r})
      assert Map.fetch!(map, List.last(keys)) == r
    end
  end

  test "encoding #{@calls} lists of records with 30 distinct 10 KB keys keeps no more native memory" do
    records = fn call ->
      record = Map.new(1..30, &{huge_key(&1, call, 10_000), &1})
      List.duplicate(record, 20)
    end

    for call <- 1..4, do: RustyJson.encode!(records.(-call))
    before = native_held()
    for call <- 1..@calls, do: RustyJson.encode!(records.(call))
    grown = native_held() - before
    assert grown < 4 * @mib, "the NIF keeps #{grown} bytes more after #{@calls} encodes"
  end

  defp object(keys, value), do: "{" <> Enum.map_join(keys, ",", &~s("#{&1}":#{value})) <> "}"
end
