# The main job (`make demo`): encode and decode real and generated documents with RustyJson and jiffy,
# printing per document its size and the median time of each. Run: mix run bench/demo.exs
Code.require_file("../test/support/apt_libs.exs", __DIR__)
Code.require_file("harness.exs", __DIR__)
Code.require_file("inputs.exs", __DIR__)
RustyJson.AptLibs.add_paths!([:jiffy])

alias RustyJson.Bench.{Harness, Inputs}

inputs = Inputs.shared() ++ Inputs.generated(report_mb: 2) ++ Inputs.micro()

if Inputs.shared() == [] do
  IO.puts("(no public documents under #{Inputs.shared_dir()}: generated documents only)\n")
end

IO.puts(
  String.pad_trailing("document", 22) <>
    Enum.map_join(
      ["size", "RJ encode", "jiffy enc", "RJ decode", "jiffy dec"],
      &String.pad_leading(&1, 12)
    )
)

for {name, json, term} <- inputs do
  enc =
    Harness.compare(
      [
        rusty_json: fn -> RustyJson.encode!(term) end,
        jiffy: fn -> :jiffy.encode(term, [:use_nil]) end
      ],
      rounds: 7,
      batch_ms: 10
    )

  dec =
    Harness.compare(
      [
        rusty_json: fn -> RustyJson.decode!(json) end,
        jiffy: fn -> :jiffy.decode(json, [:return_maps, :use_nil]) end
      ],
      rounds: 7,
      batch_ms: 10
    )

  cells = [
    Harness.fmt_bytes(byte_size(json)),
    Harness.fmt_us(enc.rusty_json.median_us),
    Harness.fmt_us(enc.jiffy.median_us),
    Harness.fmt_us(dec.rusty_json.median_us),
    Harness.fmt_us(dec.jiffy.median_us)
  ]

  IO.puts(String.pad_trailing(name, 22) <> Enum.map_join(cells, &String.pad_leading(&1, 12)))
end

# Streams: a generated JSON Lines file written with RustyJson.Stream.encode_lines/2 and read back with
# decode_documents/2 from 64 KiB chunks, with the time and the OS process's peak RSS growth of each direction.
rss = fn ->
  case Regex.run(~r/VmRSS:\s+(\d+) kB/, File.read!("/proc/self/status")) do
    [_, kb] -> String.to_integer(kb) * 1024
    _ -> 0
  end
end

# Runs `fun` while a sampler records the highest RSS; returns {seconds, RSS before, peak RSS} (bytes).
measure = fn fun ->
  :erlang.garbage_collect()
  base = rss.()
  parent = self()

  sampler =
    spawn(fn ->
      sample = fn sample, peak ->
        receive do
          :stop -> send(parent, {:peak, peak})
        after
          20 -> sample.(sample, max(peak, rss.()))
        end
      end

      sample.(sample, base)
    end)

  {us, _} = :timer.tc(fun)
  send(sampler, :stop)

  receive do
    {:peak, peak} -> {us / 1_000_000, base, peak}
  end
end

path = Path.join(System.tmp_dir!(), "rusty_json_demo_#{System.os_time()}.jsonl")
records = 200_000

event = fn i ->
  %{
    "id" => i,
    "level" => Enum.at(["info", "warn", "error"], rem(i, 3)),
    "msg" => "request #{i} took #{rem(i * 7, 900)} ms",
    "at" => "2026-11-24T00:00:#{rem(i, 60)}Z",
    "tags" => ["api", "v#{rem(i, 4)}"]
  }
end

{enc_s, enc_base, enc_peak} =
  measure.(fn ->
    1..records
    |> Stream.map(event)
    |> RustyJson.Stream.encode_lines()
    # One write per 1,000 lines rather than per line.
    |> Stream.chunk_every(1_000)
    |> Stream.into(File.stream!(path))
    |> Stream.run()
  end)

size = File.stat!(path).size

{dec_s, dec_base, dec_peak} =
  measure.(fn ->
    # 64 KiB chunks (what `File.stream!(path, 65_536)` gives on Elixir 1.16+; spelled out for 1.14 and 1.15).
    chunks =
      Stream.resource(
        fn -> File.open!(path, [:read, :binary, :raw]) end,
        fn file ->
          case :file.read(file, 65_536) do
            {:ok, chunk} -> {[chunk], file}
            :eof -> {:halt, file}
          end
        end,
        &File.close/1
      )

    records = chunks |> RustyJson.Stream.decode_documents() |> Enum.count()
    send(self(), {:decoded, records})
  end)

receive do
  {:decoded, ^records} -> :ok
end

File.rm!(path)
mb = fn bytes -> :erlang.float_to_binary(bytes / 1_048_576, decimals: 1) <> " MB" end

IO.puts("""

JSON Lines: #{records} events, #{mb.(size)} (RustyJson.Stream, file read in 64 KiB chunks)
  encode_lines to the file:       #{Float.round(enc_s, 2)} s, RSS #{mb.(enc_base)} before, #{mb.(enc_peak)} at most
  decode_documents from the file: #{Float.round(dec_s, 2)} s, RSS #{mb.(dec_base)} before, #{mb.(dec_peak)} at most
""")
