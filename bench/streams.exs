# Stream benchmark: RustyJson.Stream's decode_documents/decode_array/encode_lines/encode_array against whole-document
# calls on the same records, and the process RSS while ~1 GB streams through each (bench/notes/95-streams.md).
# Run: taskset -c 1 mix run bench/streams.exs   (make bench-streams)
#   ROUNDS=n (default 5) rounds per case; MEM_MB=n (default 1024) megabytes per memory case; N=n records (100,000).
Code.require_file("harness.exs", __DIR__)

defmodule RustyJson.Bench.Streams do
  @moduledoc false
  alias RustyJson.Bench.Harness

  @chunk 65_536

  def main do
    rounds = env_int("ROUNDS", 5)
    n = env_int("N", 100_000)
    mem_mb = env_int("MEM_MB", 1024)
    :rand.seed(:exsss, {1, 2, 3})
    started = System.monotonic_time(:millisecond)

    IO.puts(
      "# Streams: OTP #{System.otp_release()}, Elixir #{System.version()}, #{n} records, #{rounds} rounds, #{Date.utc_today()}\n"
    )

    otp_json? = Code.ensure_loaded?(:json) and function_exported?(:json, :decode_start, 3)
    # First, while the VM holds little else: RSS then shows what the streams themselves hold.
    memory(for(i <- 1..20_000, do: small_record(i)), mem_mb)
    small = for i <- 1..n, do: small_record(i)
    large = for i <- 1..n, do: large_record(i)
    inputs = for {name, records} <- [small: small, large: large], do: {name, prepare(records)}

    decoding(inputs, rounds, otp_json?)
    array_items(Keyword.fetch!(inputs, :small), rounds)
    encoding([small: small, large: large], rounds)

    IO.puts("\nTotal: #{div(System.monotonic_time(:millisecond) - started, 1000)} s")
  end

  ## Inputs

  defp small_record(i) do
    %{
      "ts" => "2026-11-22T10:#{pad(rem(i, 60))}:#{pad(rem(i * 7, 60))}.#{rem(i * 131, 1000)}Z",
      "level" => Enum.at(~w(debug info info info warn error), rem(i, 6)),
      "service" => Enum.at(~w(api billing auth search worker), rem(i, 5)),
      "msg" => "request handled " <> String.duplicate("x", :rand.uniform(120)),
      "request_id" => Base.encode16(:crypto.strong_rand_bytes(8), case: :lower),
      "duration_ms" => :rand.uniform() * 250,
      "status" => Enum.at([200, 200, 201, 404, 500], rem(i, 5)),
      "tags" => Enum.take(~w(edge eu-west canary retry), rem(i, 4) + 1)
    }
  end

  defp large_record(i) do
    items = 8 + :rand.uniform(20)

    %{
      "id" => i,
      "type" => "order",
      "created_at" => "2026-11-22T10:00:00Z",
      "customer" => %{
        "id" => :rand.uniform(1_000_000),
        "name" => "Customer #{i}",
        "email" => "customer#{i}@example.com",
        "address" => %{"street" => "#{i} Main Street", "city" => "Springfield", "zip" => "12345"},
        "vip" => rem(i, 10) == 0
      },
      "items" =>
        for j <- 1..items do
          %{
            "sku" => "SKU-#{i}-#{j}",
            "title" => "Item #{j} " <> String.duplicate("é", :rand.uniform(20)),
            "qty" => :rand.uniform(5),
            "price" => :rand.uniform() * 100,
            "attrs" => %{"color" => "blue", "size" => "M", "weight_g" => :rand.uniform(2000)}
          }
        end,
      "notes" => nil,
      "paid" => true
    }
  end

  defp pad(k), do: String.pad_leading(Integer.to_string(k), 2, "0")

  # The JSON Lines text and the same records as one JSON array.
  defp prepare(records) do
    lines = Enum.map(records, &[RustyJson.encode!(&1), ?\n]) |> IO.iodata_to_binary()
    %{text: lines, array: RustyJson.encode!(records)}
  end

  # `bin` in 64 KiB chunks cut as they are consumed, as File.stream!(path, 65_536) reads them: none is held
  # before or after its turn. A list of all the chunks held by the sample process instead (4,589 sub-binaries for
  # the large records) was copied by every major collection of the stream's process and charged to the stream:
  # OTP 25, large records, 883-938 ms held against 612-704 ms cut lazily (bench/notes/95-streams.md).
  defp chunks(bin) do
    Stream.unfold(0, fn
      offset when offset >= byte_size(bin) -> nil
      offset -> {binary_part(bin, offset, min(@chunk, byte_size(bin) - offset)), offset + @chunk}
    end)
  end

  # The same chunks as a list, for the memory cases, which cycle one block.
  defp cut(bin), do: bin |> chunks() |> Enum.to_list()

  ## Part 1: JSON Lines decoding

  defp decoding(inputs, rounds, otp_json?) do
    cases =
      for {name, input} <- inputs do
        # Each case's function closes over only the data it uses: a sample process gets a copy of what the
        # function holds, and on OTP 27+ each copied sub-binary counts its whole underlying binary against that
        # process's virtual binary heap (see bench/notes/95-streams.md).
        %{array: array, text: text} = input

        funs = [
          {:stream,
           fn -> text |> chunks() |> RustyJson.Stream.decode_documents() |> Stream.run() end},
          {:array, fn -> RustyJson.decode!(array) end},
          {:split,
           fn -> text |> String.split("\n", trim: true) |> Enum.map(&RustyJson.decode!/1) end}
        ]

        funs =
          if otp_json?,
            do:
              funs ++
                [
                  {:otp_json, fn -> otp_json_documents(chunks(text)) end}
                ],
            else: funs

        {name, funs}
      end

    stats = Harness.compare_all(cases, timing(rounds))

    IO.puts("## 2. JSON Lines decode (64 KiB chunks)\n")

    IO.puts(
      "| records | text | decode_documents (a) | decode! array (b) | split + decode! (c) | :json (d) | a / b | c / a | d / a |"
    )

    IO.puts("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    for {name, input} <- inputs do
      s = stats[name]

      d =
        if s[:otp_json],
          do: Harness.fmt_us(s.otp_json.median_us),
          else: "n/a (OTP #{System.otp_release()})"

      dr = if s[:otp_json], do: r(Harness.ratio(s, :otp_json, :stream)), else: "n/a"

      IO.puts(
        "| #{name} | #{Harness.fmt_bytes(byte_size(input.text))} | #{t(s.stream)} | #{t(s.array)} | #{t(s.split)} | #{d} | " <>
          "#{r(Harness.ratio(s, :stream, :array))} | #{r(Harness.ratio(s, :split, :stream))} | #{dr} |"
      )
    end

    IO.puts("")
  end

  # OTP 27+'s :json over the same chunks: decode_start/3 returns {:continue, state} for an incomplete value and
  # {value, acc, rest} for a complete one, so the documents are split by starting again on `rest` (after its
  # whitespace). Called through apply/3 so the script compiles on OTPs without :json.
  defp otp_json_documents(chunks) do
    case Enum.reduce(chunks, nil, &otp_feed/2) do
      nil -> :ok
      {:continue, state} -> apply(:json, :decode_continue, [:end_of_input, state])
    end
  end

  defp otp_feed(chunk, nil), do: otp_start(chunk)

  defp otp_feed(chunk, {:continue, state}),
    do: otp_next(apply(:json, :decode_continue, [chunk, state]))

  defp otp_start(<<c, rest::binary>>) when c in [?\s, ?\n, ?\r, ?\t], do: otp_start(rest)
  defp otp_start(<<>>), do: nil
  defp otp_start(bin), do: otp_next(apply(:json, :decode_start, [bin, :ok, %{}]))

  defp otp_next({:continue, _} = continue), do: continue
  defp otp_next({_value, _acc, rest}), do: otp_start(rest)

  ## Part 2: decode_array

  defp array_items(input, rounds) do
    %{array: array} = input

    stats =
      Harness.compare(
        [
          {:stream,
           fn -> array |> chunks() |> RustyJson.Stream.decode_array() |> Stream.run() end},
          {:whole, fn -> RustyJson.decode!(array) end}
        ],
        timing(rounds)
      )

    IO.puts("## 3. decode_array (small records, 64 KiB chunks)\n")
    IO.puts("| array | decode_array | decode! whole | decode_array / decode! |")
    IO.puts("| ---: | ---: | ---: | ---: |")

    IO.puts(
      "| #{Harness.fmt_bytes(byte_size(input.array))} | #{t(stats.stream)} | #{t(stats.whole)} | #{r(Harness.ratio(stats, :stream, :whole))} |\n"
    )
  end

  ## Part 3: encoding

  defp encoding(sets, rounds) do
    cases =
      for {name, records} <- sets do
        {name,
         [
           {:lines, fn -> records |> RustyJson.Stream.encode_lines() |> count_bytes() end},
           {:array, fn -> records |> RustyJson.Stream.encode_array() |> count_bytes() end},
           {:whole, fn -> byte_size(RustyJson.encode!(records)) end}
         ]}
      end

    stats = Harness.compare_all(cases, timing(rounds))

    IO.puts("## 4. Encode (streams consumed by Enum.reduce counting bytes)\n")

    IO.puts(
      "| records | encode_lines | encode_array | encode! whole list | lines / whole | array / whole |"
    )

    IO.puts("| --- | ---: | ---: | ---: | ---: | ---: |")

    for {name, _} <- sets do
      s = stats[name]

      IO.puts(
        "| #{name} | #{t(s.lines)} | #{t(s.array)} | #{t(s.whole)} | #{r(Harness.ratio(s, :lines, :whole))} | " <>
          "#{r(Harness.ratio(s, :array, :whole))} |"
      )
    end

    IO.puts("")
  end

  defp count_bytes(stream), do: Enum.reduce(stream, 0, &(&2 + IO.iodata_length(&1)))

  ## Part 4: memory

  # A block of ~4 MB of complete lines (or array items each followed by a comma) cut into 64 KiB chunks, cycled
  # until `mb` megabytes: the stream is never held whole, and items span chunk boundaries.
  defp memory(small, mb) do
    total = mb * 1_048_576
    every = 100 * 1_048_576
    block = small
    lines = cut(IO.iodata_to_binary(Enum.map(block, &[RustyJson.encode!(&1), ?\n])))
    items = cut(IO.iodata_to_binary(Enum.map(block, &[RustyJson.encode!(&1), ?,])))
    last = RustyJson.encode!(hd(small)) <> "]"

    IO.puts("## 1. RSS while ~#{mb} MB streams through (small records)\n")

    IO.puts(
      "| case | bytes | items | time | RSS before | RSS max | RSS after | growth (max - before) |"
    )

    IO.puts("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    rss_case(
      "decode_documents",
      fn sample ->
        lines |> cycled(total) |> sample.() |> RustyJson.Stream.decode_documents() |> Enum.count()
      end,
      every
    )

    rss_case(
      "decode_array",
      fn sample ->
        Stream.concat([["["], cycled(items, total), [last]])
        |> sample.()
        |> RustyJson.Stream.decode_array()
        |> Enum.count()
      end,
      every
    )

    per =
      div(
        byte_size(IO.iodata_to_binary(Enum.map(block, &[RustyJson.encode!(&1), ?\n]))),
        length(block)
      )

    rss_case(
      "encode_lines to /dev/null",
      fn sample ->
        small
        |> Stream.cycle()
        |> Stream.take(div(total, per))
        |> RustyJson.Stream.encode_lines()
        |> sample.()
        |> Stream.into(File.stream!("/dev/null", [:delayed_write]))
        |> Enum.count()
      end,
      every
    )

    rss_case(
      "encode_array to /dev/null",
      fn sample ->
        small
        |> Stream.cycle()
        |> Stream.take(div(total, per))
        |> RustyJson.Stream.encode_array()
        |> sample.()
        |> Stream.into(File.stream!("/dev/null", [:delayed_write]))
        |> Enum.count()
      end,
      every
    )

    IO.puts("")
  end

  defp cycled(chunks, total) do
    size = chunks |> Enum.map(&byte_size/1) |> Enum.sum()
    chunks |> List.duplicate(div(total, size)) |> Stream.concat()
  end

  # Runs `fun` with a sampler to wrap the byte stream in: it reads VmRSS every `every` bytes.
  defp rss_case(label, fun, every) do
    :erlang.garbage_collect()
    before = rss()
    :ets.new(:rss, [:named_table, :public])
    :ets.insert(:rss, {:max, before})
    :ets.insert(:rss, {:bytes, 0})

    sample = fn stream ->
      Stream.each(stream, fn chunk ->
        bytes = :ets.update_counter(:rss, :bytes, IO.iodata_length(chunk))

        if div(bytes, every) != div(bytes - IO.iodata_length(chunk), every) do
          now = rss()
          [{:max, m}] = :ets.lookup(:rss, :max)
          :ets.insert(:rss, {:max, max(m, now)})
        end
      end)
    end

    {us, count} = :timer.tc(fn -> fun.(sample) end)
    after_rss = rss()
    [{:max, m}] = :ets.lookup(:rss, :max)
    [{:bytes, bytes}] = :ets.lookup(:rss, :bytes)
    :ets.delete(:rss)
    m = max(m, after_rss)

    IO.puts(
      "| #{label} | #{Harness.fmt_bytes(bytes)} | #{count} | #{:erlang.float_to_binary(us / 1.0e6, decimals: 1)} s | " <>
        "#{mib(before)} | #{mib(m)} | #{mib(after_rss)} | #{mib(m - before)} |"
    )
  end

  defp rss do
    [_, kb] = Regex.run(~r/VmRSS:\s+(\d+) kB/, File.read!("/proc/self/status"))
    String.to_integer(kb) * 1024
  end

  ## Formatting

  defp timing(rounds), do: [rounds: rounds, max_rounds: rounds, batch_ms: 1]
  defp t(stats), do: Harness.fmt_us(stats.median_us)
  defp r(x), do: :erlang.float_to_binary(x, decimals: 2)
  defp mib(b), do: :erlang.float_to_binary(b / 1_048_576, decimals: 1) <> " MiB"
  defp env_int(name, default), do: String.to_integer(System.get_env(name, "#{default}"))
end

RustyJson.Bench.Streams.main()
