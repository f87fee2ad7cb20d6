:rand.seed(:exsss, {1, 2, 3})
rec = fn i -> %{"ts" => "2026-11-22T10:00:#{rem(i,60)}.123Z", "level" => "info", "service" => "api",
  "msg" => "request handled " <> String.duplicate("x", :rand.uniform(120)),
  "request_id" => Base.encode16(:crypto.strong_rand_bytes(8), case: :lower),
  "duration_ms" => :rand.uniform() * 250, "status" => 200, "tags" => ["edge", "eu-west"]} end
records = for i <- 1..20000, do: rec.(i)
text = records |> Enum.map(&[RustyJson.encode!(&1), ?\n]) |> IO.iodata_to_binary()
array = RustyJson.encode!(records)
chunks = for(<<c::binary-size(65536) <- text>>, do: c) ++ [binary_part(text, div(byte_size(text), 65536) * 65536, rem(byte_size(text), 65536))]
File.write!("/tmp/pid", System.pid())
what = System.get_env("WHAT", "stream")
deadline = System.monotonic_time(:millisecond) + 40_000
Stream.repeatedly(fn -> if what == "stream", do: chunks |> RustyJson.Stream.decode_documents() |> Stream.run(), else: RustyJson.decode!(array) end)
|> Stream.take_while(fn _ -> System.monotonic_time(:millisecond) < deadline end) |> Stream.run()
