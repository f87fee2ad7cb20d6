# JSON Pointer benchmark: RustyJson.get/3 of one small field of a large document against decode!/1 of it, and
# RustyJson.Stream.decode_array/2 with `at:` over an envelope against decode_array/2 of the same items as a
# top-level array (bench/notes/96-pointer.md).
# Run: taskset -c 1 mix run bench/pointer.exs   ROUNDS=n (default 15); RUSTYJSON_BENCH_DATA for the documents
# (default ../shared/data/bench, read in place, never copied); DUMP_DIR=dir also writes the ~10 MB documents there.
Code.require_file("harness.exs", __DIR__)

defmodule RustyJson.Bench.Pointer do
  @moduledoc false
  alias RustyJson.Bench.Harness

  @chunk 65_536
  @target_bytes 10_000_000

  def main do
    rounds = String.to_integer(System.get_env("ROUNDS", "15"))
    :rand.seed(:exsss, {1, 2, 3})

    IO.puts(
      "# JSON Pointers: OTP #{System.otp_release()}, Elixir #{System.version()}, #{rounds} rounds, #{Date.utc_today()}\n"
    )

    documents = [{"generated API records", records()} | public_documents()]

    IO.puts(
      "## get(\"/meta/total\") against decode!/1 of the whole ~10 MB document (target < 0.15)\n"
    )

    IO.puts(
      "| items | size | decode! | get | get / decode! |\n| --- | ---: | ---: | ---: | ---: |"
    )

    for {name, items} <- documents do
      json =
        RustyJson.encode!(%{"data" => items, "meta" => %{"total" => length(items), "page" => 1}})

      {:ok, total} = RustyJson.get(json, "/meta/total")
      ^total = length(items)
      dump(name, json)

      stats =
        Harness.compare(
          [
            decode: fn -> RustyJson.decode!(json) end,
            get: fn -> RustyJson.get!(json, "/meta/total") end
          ],
          rounds: rounds
        )

      IO.puts(
        "| #{name} | #{Harness.fmt_bytes(byte_size(json))} | #{Harness.fmt_us(stats.decode.median_us)} | " <>
          "#{Harness.fmt_us(stats.get.median_us)} | #{ratio(stats, :get, :decode)} |"
      )
    end

    IO.puts(
      "\n## decode_array(at: \"/data\") against decode_array/2 of the same items as the document (target <= 1.1)\n"
    )

    IO.puts(
      "| items | size | top-level array | at: \"/data\" | at / top-level |\n| --- | ---: | ---: | ---: | ---: |"
    )

    for {name, items} <- documents do
      array = RustyJson.encode!(items)

      envelope =
        ~s({"meta": {"total": #{length(items)}, "page": 1}, "data": ) <>
          array <> ~s(, "links": {"next": null}})

      plain = fn -> array |> chunks() |> RustyJson.Stream.decode_array() |> Stream.run() end

      at = fn ->
        envelope |> chunks() |> RustyJson.Stream.decode_array(at: "/data") |> Stream.run()
      end

      count = envelope |> chunks() |> RustyJson.Stream.decode_array(at: "/data") |> Enum.count()
      ^count = length(items)
      stats = Harness.compare([plain: plain, at: at], rounds: rounds)

      IO.puts(
        "| #{name} | #{Harness.fmt_bytes(byte_size(envelope))} | #{Harness.fmt_us(stats.plain.median_us)} | " <>
          "#{Harness.fmt_us(stats.at.median_us)} | #{ratio(stats, :at, :plain)} |"
      )
    end
  end

  defp ratio(stats, a, b), do: :erlang.float_to_binary(Harness.ratio(stats, a, b), decimals: 3)

  # 64 KiB sub-binaries, as `File.stream!(path, 65_536)` reads them.
  defp chunks(bin) do
    Stream.unfold(0, fn
      offset when offset >= byte_size(bin) -> nil
      offset -> {binary_part(bin, offset, min(@chunk, byte_size(bin) - offset)), offset + @chunk}
    end)
  end

  # Records as a paginated API lists them: ids, names, timestamps, amounts, a nested address, tags.
  # DUMP_DIR=dir writes each document there (for bench/pointer_simdjson.py, the reference outside the BEAM).
  defp dump(name, json) do
    case System.get_env("DUMP_DIR") do
      nil ->
        :ok

      dir ->
        File.write!(Path.join(dir, String.replace(name, ~r/[^a-z0-9]+/i, "_") <> ".json"), json)
    end
  end

  defp records do
    Stream.iterate(1, &(&1 + 1))
    |> Stream.map(&record/1)
    |> Enum.reduce_while({[], 0}, fn r, {acc, size} ->
      if size >= @target_bytes,
        do: {:halt, {acc, size}},
        else: {:cont, {[r | acc], size + byte_size(RustyJson.encode!(r))}}
    end)
    |> elem(0)
    |> Enum.reverse()
  end

  defp record(i) do
    %{
      "id" => i,
      "uuid" => Base.encode16(:crypto.strong_rand_bytes(16), case: :lower),
      "name" => Enum.at(~w(Ada Grace Linus Barbara Ken Margaret), rem(i, 6)) <> " #{i}",
      "email" => "user#{i}@example.com",
      "created_at" => "2026-11-#{10 + rem(i, 18)}T10:#{rem(i, 60)}:00Z",
      "status" => Enum.at(~w(active pending closed), rem(i, 3)),
      "amount" => Float.round(:rand.uniform() * 1000, 2),
      "items" => :rand.uniform(9),
      "address" => %{
        "city" => Enum.at(~w(Paris Zürich Kyoto Lima), rem(i, 4)),
        "zip" => "#{10_000 + i}"
      },
      "tags" => Enum.take(~w(vip eu beta retry), rem(i, 4) + 1),
      "note" => String.duplicate("lorem ipsum ", :rand.uniform(6))
    }
  end

  # The public documents' largest arrays, repeated to ~10 MB: twitter's statuses, citm_catalog's performances.
  defp public_documents do
    dir = System.get_env("RUSTYJSON_BENCH_DATA", Path.expand("../../shared/data/bench", __DIR__))

    for {file, path} <- [{"twitter.json", ["statuses"]}, {"citm_catalog.json", ["performances"]}],
        full = Path.join(dir, file),
        File.exists?(full) do
      items = full |> File.read!() |> RustyJson.decode!() |> get_in(path)
      size = byte_size(RustyJson.encode!(items))

      {"#{file} #{Enum.join(path, "/")}",
       items |> List.duplicate(div(@target_bytes, size) + 1) |> Enum.concat()}
    end
  end
end

RustyJson.Bench.Pointer.main()
