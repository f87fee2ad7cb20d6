:rand.seed(:exsss, {1, 2, 3})
rec = fn i -> %{"ts" => "2026-11-22T10:00:#{rem(i,60)}.123Z", "level" => "info", "service" => "api",
  "msg" => "request handled " <> String.duplicate("x", :rand.uniform(120)),
  "request_id" => Base.encode16(:crypto.strong_rand_bytes(8), case: :lower),
  "duration_ms" => :rand.uniform() * 250, "status" => 200, "tags" => ["edge", "eu-west"]} end
records = for i <- 1..20000, do: rec.(i)
text = records |> Enum.map(&[RustyJson.encode!(&1), ?\n]) |> IO.iodata_to_binary()
array = RustyJson.encode!(records)
chunks = for(<<c::binary-size(65536) <- text>>, do: c) ++ [binary_part(text, div(byte_size(text), 65536) * 65536, rem(byte_size(text), 65536))]
t = fn f -> Enum.min(for _ <- 1..15, do: elem(:timer.tc(f), 0)) end
split = fn -> s = RustyJson.Native.splitter_new(:documents); Enum.each(chunks, &RustyJson.Native.split_chunk(s, &1, nil)) end
IO.puts("bytes #{byte_size(text)}")
IO.puts("split only   #{t.(split)} us")
IO.puts("stream       #{t.(fn -> chunks |> RustyJson.Stream.decode_documents() |> Stream.run() end)} us")
IO.puts("array decode #{t.(fn -> RustyJson.decode!(array) end)} us")
IO.puts("array dirty  #{t.(fn -> RustyJson.Native.decode_dirty(array, 0) end)} us")
# per chunk: the same items as one array (in-heap decode) vs split_chunk with decoding
lines = String.split(text, "\n", trim: true)
groups = Enum.chunk_every(lines, 250)
arrays = Enum.map(groups, fn g -> "[" <> Enum.join(g, ",") <> "]" end)
texts = Enum.map(groups, fn g -> Enum.join(g, "\n") <> "\n" end)
IO.puts("arrays decode  #{t.(fn -> Enum.each(arrays, &RustyJson.Native.decode(&1, 0)) end)} us")
IO.puts("split_chunk 0  #{t.(fn -> s = RustyJson.Native.splitter_new(:documents); Enum.each(texts, &RustyJson.Native.split_chunk(s, &1, 0)) end)} us")
IO.puts("split_chunk nil #{t.(fn -> s = RustyJson.Native.splitter_new(:documents); Enum.each(texts, &RustyJson.Native.split_chunk(s, &1, nil)) end)} us")
