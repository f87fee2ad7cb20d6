defmodule RustyJson.DecodeHeldStringsTest do
  # What a decoded escaped string keeps alive once the rest of its decode is gone (issue #57): its shared binary,
  # at most 4 KiB, or its own binary when it is longer. With 64 KiB shared binaries, one 68-byte string kept
  # from each of 2,000 decodes grew the VM's binary memory by 128 MB. Counted in the bytes the VM reports.
  # Not async: `:erlang.memory(:binary)` is the whole VM's.
  use ExUnit.Case, async: false

  @kib 1024

  # A JSON array of `count` strings of `len` bytes, each with escapes (a tab and a quote).
  defp escaped_strings(count, len) do
    texts = for i <- 1..count, do: String.duplicate("a", len - 8) <> "\t\"#{100_000 + i}"
    {texts, RustyJson.encode!(texts)}
  end

  # The string at `at` of each of `decodes` decodes of `json`, each decode in a process that is gone when its
  # string comes back.
  defp keep_one(json, at, decodes) do
    for _ <- 1..decodes do
      Task.async(fn -> Enum.at(RustyJson.decode!(json), at) end) |> Task.await()
    end
  end

  defp binary_memory do
    for _ <- 1..3, do: :erlang.garbage_collect()
    :erlang.memory(:binary)
  end

  # About 70 KB of 68-byte strings: decoded detached (64 KiB and more) and, 50 of them, on the caller's heap.
  for {count, label} <- [{1_000, "70 KB"}, {50, "3.5 KB"}] do
    test "a kept 68-byte escaped string from a #{label} document holds at most 4 KiB" do
      {texts, json} = escaped_strings(unquote(count), 68)
      at = div(unquote(count), 2)
      # Warm-up: the allocators' carriers at their working size.
      keep_one(json, at, 20)
      decodes = 300
      before = binary_memory()
      kept = keep_one(json, at, decodes)
      grown = binary_memory() - before

      assert Enum.all?(kept, &(&1 == Enum.at(texts, at)))
      assert Enum.all?(kept, &(:binary.referenced_byte_size(&1) <= 4 * @kib))
      # 4 KiB a string and the allocator's own header for each binary (64 KiB each before).
      assert grown <= decodes * (4 * @kib + 256),
             "#{decodes} kept 68-byte strings hold #{grown} bytes (#{div(grown, decodes)} each)"
    end
  end

  test "a kept escaped string holds at most 4 KiB, or 4 times its size when longer" do
    lens = [
      65,
      68,
      100,
      500,
      1_000,
      1_024,
      1_025,
      2_100,
      3_000,
      4_000,
      4_096,
      4_097,
      6_000,
      20_000
    ]

    for len <- lens, count <- [1, 3, 40] do
      {texts, json} = escaped_strings(count, len)
      decoded = RustyJson.decode!(json)
      assert decoded == texts

      for s <- decoded do
        held = :binary.referenced_byte_size(s)

        assert held <= max(4 * @kib, 4 * len),
               "#{count} strings of #{len} bytes: one holds #{held}"
      end
    end

    # Strings of mixed lengths in one document.
    :rand.seed(:exsss, {57, 57, 57})
    texts = for _ <- 1..2_000, do: String.duplicate("b", :rand.uniform(5_000)) <> "\n"
    decoded = RustyJson.decode!(RustyJson.encode!(texts))
    assert decoded == texts

    for s <- decoded do
      assert :binary.referenced_byte_size(s) <= max(4 * @kib, 4 * byte_size(s))
    end
  end

  test "strings: :copy keeps only each string" do
    {texts, json} = escaped_strings(1_000, 68)
    copied = RustyJson.decode!(json, strings: :copy)
    assert copied == texts

    for s <- copied do
      assert :binary.referenced_byte_size(s) == :binary.referenced_byte_size(:binary.copy(s))
    end
  end
end
