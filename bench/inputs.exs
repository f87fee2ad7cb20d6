defmodule RustyJson.Bench.Inputs do
  @moduledoc false
  # The benchmark documents: the public ones in ../shared/data/bench/ when present (or $RUSTYJSON_BENCH_DATA),
  # and documents generated here so every benchmark runs anywhere. Each input is {name, json_text, term}, where
  # term is what a JSON decoder returns for the text (jiffy, with nil for null).

  @shared_docs ~w(canada citm_catalog twitter github_events mesh update-center twitterescaped)

  @spec shared_dir() :: String.t()
  def shared_dir do
    System.get_env("RUSTYJSON_BENCH_DATA") ||
      Path.expand("../../shared/data/bench", __DIR__)
  end

  @doc "The public documents that are present, in a fixed order."
  def shared do
    for name <- @shared_docs,
        path = Path.join(shared_dir(), name <> ".json"),
        File.exists?(path) do
      from_json(name, File.read!(path))
    end
  end

  @doc "Generated documents: an API-style list, a report-like document of about `report_mb` MB, and more."
  def generated(opts \\ []) do
    report_mb = Keyword.get(opts, :report_mb, 10)

    [
      from_term("api_list_1000", api_list(1000)),
      from_term("report_#{report_mb}mb", report(report_mb)),
      from_term("nested_100", nested(100)),
      from_term("object_5000_keys", Map.new(1..5000, &{"key_#{&1}", &1})),
      from_term("escaped_text", escaped_text(3000))
    ]
  end

  @doc "The micro inputs from ruby/json's benchmarks."
  def micro do
    [
      from_term("small_mixed", [1, "string", %{"a" => 1, "b" => 2}, [3, 4, 5]]),
      from_term("small_nested_array", List.duplicate([1, 2, 3, 4, 5], 10)),
      from_term("small_hash", %{
        "username" => "jhawthorn",
        "id" => 123,
        "event" => "wrote json serializer"
      })
    ]
  end

  def from_json(name, json), do: {name, json, :jiffy.decode(json, [:return_maps, :use_nil])}

  def from_term(name, term),
    do: {name, IO.iodata_to_binary(:jiffy.encode(term, [:use_nil])), term}

  def api_list(n) do
    for i <- 1..n do
      %{
        "id" => i,
        "uuid" => "5f0c#{i}-1b2c-4d5e-8f90-#{100_000 + i}",
        "name" => "User #{i}",
        "email" => "user#{i}@example.com",
        "active" => rem(i, 3) != 0,
        "score" => i * 1.25,
        "tags" => ["tag#{rem(i, 7)}", "tag#{rem(i, 11)}"],
        "address" => %{
          "city" => "City #{rem(i, 50)}",
          "zip" => "#{10000 + i}",
          "geo" => [i / 7, -i / 9]
        },
        "inserted_at" => "2026-11-#{rem(i, 28) + 1}T12:00:00Z",
        "note" => if(rem(i, 5) == 0, do: nil, else: "Línea #{i} — \"quoted\" text\n")
      }
    end
  end

  # Arrays of transactions with nested objects, dates and decimals as strings, mixed types.
  def report(mb) do
    per_tx = 330
    count = div(mb * 1_000_000, per_tx)

    transactions =
      for i <- 1..count do
        %{
          "id" => "tx-#{i}",
          "date" => "2026-#{pad(rem(i, 12) + 1)}-#{pad(rem(i, 28) + 1)}",
          "amount" => "#{div(i * 7919, 100)}.#{pad(rem(i * 7919, 100))}",
          "rate" => i / 997,
          "quantity" => rem(i * 31, 1000),
          "posted" => rem(i, 2) == 0,
          "memo" => if(rem(i, 4) == 0, do: nil, else: "Payment #{i} for order ##{i * 3}"),
          "account" => %{
            "number" => "ACC#{rem(i, 9973)}",
            "currency" => "EUR",
            "owner" => "Owner #{rem(i, 211)}"
          },
          "lines" => [
            %{
              "sku" => "SKU-#{rem(i, 500)}",
              "qty" => rem(i, 9) + 1,
              "price" => "#{rem(i, 300)}.99"
            },
            %{"sku" => "SKU-#{rem(i + 1, 500)}", "qty" => 1, "price" => "4.50"}
          ]
        }
      end

    %{
      "report" => %{
        "generated_at" => "2026-11-22T00:00:00Z",
        "currency" => "EUR",
        "transactions" => transactions
      }
    }
  end

  # Log lines and user text: an escape every 10-20 bytes (quotes, backslashes, newlines, tabs, control
  # characters) among ASCII and non-ASCII text.
  def escaped_text(n) do
    for i <- 1..n do
      %{
        "id" => i,
        "message" =>
          "GET \"/api/v1/items/#{i}\" failed:\n\tcause: \"timeout\" after #{rem(i, 900)} ms\r\n" <>
            "user said: «ça ne marche pas» — \"again\"\u0001 at C:\\logs\\#{i}.txt\n",
        "path" => "C:\\Users\\u#{i}\\Documents\\file \"#{i}\".txt",
        "tags" => ["a\tb", "line\nbreak", "ünï\"cödé\""]
      }
    end
  end

  @doc """
  Documents shaped as apps send them (issue #44), generated from a seed so a run can vary them: multilingual
  text, event-API records, one object keyed by ids, order records. `scale` multiplies the record counts.
  """
  def app_shapes(seed \\ 44, scale \\ 1) do
    :rand.seed(:exsss, {seed, seed * 7 + 1, seed * 13 + 2})
    # The default documents keep their plain names; other seeds and scales are named by them.
    suffix = if {seed, scale} in [{44, 1}, {44, 1.0}], do: "", else: "_s#{seed}x#{scale}"

    [
      from_term("multilingual_text" <> suffix, multilingual(round(4000 * scale))),
      from_term("event_records" <> suffix, events(round(3000 * scale))),
      from_term("id_keyed_object" <> suffix, id_keyed(round(20_000 * scale))),
      from_term("order_records" <> suffix, orders(round(10_000 * scale)))
    ] ++ if(suffix == "", do: [from_term("small_object", small_object())], else: [])
  end

  # Words of each script; a string is ~20 of them from a few scripts, separated by spaces and by the escapes and
  # raw U+2028 that user text carries, so escapes and multi-byte UTF-8 sit 3-10 bytes apart.
  @scripts %{
    latin: ~w(straße café naïve über déjà façade garçon Köln señor smörgås),
    ascii: ~w(the order was sent back and forth between them again today),
    cjk: ~w(日本語 東京 中文 漢字 北京 大阪 学生 電話 天気 新聞),
    hangul: ~w(한국어 서울 사랑 학교 컴퓨터 음식 친구 바다 하늘 시간),
    cyrillic: ~w(привет москва здравствуйте книга город время работа слово дом),
    emoji: ~w(😀 🎉 👍🏽 🚀 ❤️ 🇫🇷 🤖 🍕 🐧 ✨)
  }
  @separators [" ", " ", " ", " ", "\t", "\"", "\\", <<1>>, "\u2028", "\n"]

  defp words(count) do
    scripts = Enum.take_random(Map.keys(@scripts), 2 + :rand.uniform(3))

    Enum.map_join(1..count, fn _ ->
      Enum.random(@scripts[Enum.random(scripts)]) <> Enum.random(@separators)
    end)
  end

  def multilingual(n) do
    for i <- 1..n do
      %{
        "id" => i,
        "lang" => Enum.random(~w(de fr ja ko ru en)),
        "text" => words(6 + :rand.uniform(8))
      }
    end
  end

  defp hex(bytes), do: Base.encode16(:rand.bytes(bytes), case: :lower)

  defp stamp,
    do:
      "2026-#{pad(:rand.uniform(12))}-#{pad(:rand.uniform(28))}T#{pad(:rand.uniform(23))}:#{pad(:rand.uniform(59))}:00Z"

  def events(n) do
    for i <- 1..n do
      login = "user-#{:rand.uniform(500)}"
      repo = "org#{:rand.uniform(40)}/repo-#{:rand.uniform(300)}"

      %{
        "id" => Integer.to_string(20_000_000_000 + i),
        "type" => Enum.random(~w(PushEvent IssuesEvent WatchEvent CreateEvent)),
        "actor" => %{
          "id" => :rand.uniform(9_000_000),
          "login" => login,
          "url" => "https://api.example.com/users/#{login}"
        },
        "repo" => %{
          "id" => :rand.uniform(90_000_000),
          "name" => repo,
          "url" => "https://api.example.com/repos/#{repo}"
        },
        "payload" => %{
          "size" => :rand.uniform(3),
          "ref" => "refs/heads/main",
          "commits" =>
            for _ <- 1..:rand.uniform(3) do
              %{
                "sha" => hex(20),
                "author" => %{"name" => "Name #{login}"},
                "message" => words(1 + :rand.uniform(4)) <> "\n\n" <> words(2 + :rand.uniform(6)),
                "distinct" => :rand.uniform(4) > 1
              }
            end
        },
        "public" => true,
        "created_at" => stamp()
      }
    end
  end

  def id_keyed(n) do
    Map.new(1..n, fn i ->
      value =
        case rem(i, 5) do
          0 -> :rand.uniform(1_000_000)
          1 -> "v#{:rand.uniform(99_999)}"
          2 -> :rand.uniform(2) == 1
          3 -> nil
          4 -> :rand.uniform() * 1000
        end

      {"k_#{:rand.uniform(999)}_#{100_000 + i * 37 + :rand.uniform(30)}", value}
    end)
  end

  defp money, do: "#{:rand.uniform(999)}.#{pad(:rand.uniform(100) - 1)}"

  def orders(n) do
    for i <- 1..n do
      items =
        for _ <- 1..:rand.uniform(4) do
          %{
            "sku" => "SKU-#{:rand.uniform(90_000)}",
            "name" => "Item #{:rand.uniform(5000)} (#{Enum.random(~w(red blue large small))})",
            "quantity" => :rand.uniform(5),
            "unit_price" => money(),
            "fees" => [
              %{"kind" => "shipping", "amount" => money(), "currency" => "EUR"},
              %{"kind" => "tax", "amount" => money(), "rate" => :rand.uniform(25) / 100}
            ]
          }
        end

      %{
        "order_id" => "ORD-#{1_000_000 + i}",
        "status" => Enum.random(~w(paid shipped pending refunded)),
        "buyer" => %{
          "id" => :rand.uniform(1_000_000),
          "name" => "Buyer #{:rand.uniform(80_000)}",
          "email" => "buyer#{i}@example.com",
          "address" => %{
            "street" => "#{:rand.uniform(200)} Main St",
            "city" => "City #{:rand.uniform(90)}",
            "country" => "FR"
          }
        },
        "items" => items,
        "total" => :rand.uniform() * 2000,
        "tax_total" => :rand.uniform() * 300,
        "note" =>
          Enum.random([
            "",
            "Leave at the \"back door\"\nthanks",
            "Call first.\nCode: \"1234\"",
            "Gift"
          ]),
        "created_at" => stamp()
      }
    end
  end

  @doc """
  Issue #50's content kinds, from a seed: text with escapes (short strings with a few of every kind, one kind at a
  time, `\\uXXXX` escapes with surrogate pairs, long strings dense with escapes, a LiveView-style diff) and floats
  (full precision, short decimals, integral values, exponents). `scale` multiplies the counts.
  """
  def content_kinds(seed \\ 50, scale \\ 1) do
    :rand.seed(:exsss, {seed, seed * 3 + 1, seed * 5 + 2})
    n = fn count -> max(1, round(count * scale)) end
    escapes = ["\t", "\"", "\\", <<1>>, "\n", "/", "\r"]

    sentence = fn words, escapes_each ->
      Enum.map_join(1..words, " ", fn _ -> word() end)
      |> insert_escapes(Enum.take_random(escapes, escapes_each))
    end

    one_kind = fn escape ->
      for i <- 1..n.(4000), do: %{"id" => i, "text" => ascii_text(70) <> escape <> ascii_text(70)}
    end

    [
      from_term(
        "text_few_escapes",
        for(i <- 1..n.(4000), do: %{"id" => i, "text" => sentence.(20, 1 + rem(i, 3))})
      ),
      from_term("escape_kind_quote", one_kind.("\"")),
      from_term("escape_kind_control", one_kind.(<<1>>)),
      # Every non-ASCII character written as `\\uXXXX` (emoji as surrogate pairs): what ASCII-only encoders send.
      from_json(
        "escape_kind_unicode",
        IO.iodata_to_binary(
          :jiffy.encode(for(i <- 1..n.(2000), do: %{"id" => i, "text" => sentence.(12, 0)}), [
            :uescape
          ])
        )
      ),
      from_term(
        "long_dense_escapes",
        for(
          _ <- 1..n.(100),
          do: Enum.map_join(1..1000, fn _ -> ascii_text(3) <> Enum.random(escapes) end)
        )
      ),
      from_term("liveview_diff", liveview_diff(n.(5000))),
      from_term(
        "floats_full_precision",
        for(
          _ <- 1..n.(20_000),
          do: [:rand.uniform() * 360 - 180, :rand.uniform() * 180 - 90, :rand.uniform() * 1000]
        )
      ),
      from_term(
        "floats_short_decimals",
        for(
          i <- 1..n.(50_000),
          do: [1_700_000_000_000 + i * 1000, Float.round(:rand.uniform() * 1000, 3)]
        )
      ),
      from_term("floats_integral", for(_ <- 1..n.(100_000), do: :rand.uniform(100_000) * 1.0)),
      from_term(
        "floats_exponents",
        for(
          _ <- 1..n.(60_000),
          do: Float.round(:rand.uniform() * 10, 4) * :math.pow(10, :rand.uniform(60) - 30)
        )
      )
    ]
  end

  defp word do
    script = Enum.random(Map.keys(@scripts))
    Enum.random(@scripts[script])
  end

  defp ascii_text(len), do: for(_ <- 1..len, into: "", do: <<Enum.random(?a..?z)>>)

  # The escapes put between words at random places.
  defp insert_escapes(text, escapes) do
    Enum.reduce(escapes, text, fn escape, acc ->
      at = :rand.uniform(byte_size(acc)) - 1
      {a, b} = :erlang.split_binary(acc, at)
      # At a character boundary: after the next space.
      case :binary.split(b, " ") do
        [head, tail] -> a <> head <> " " <> escape <> tail
        [head] -> a <> head <> escape
      end
    end)
  end

  # A rendered diff as LiveView sends it: integer-string keys, static HTML fragments with `\"`-escaped
  # attributes, dynamic values.
  defp liveview_diff(rows) do
    static = [
      "<tr id=\"row-",
      "\" class=\"border-b hover:bg-gray-50\" phx-click=\"select\" phx-value-id=\"",
      "\"><td class=\"px-4 py-2 font-mono\">",
      "</td><td class=\"px-4 py-2\"><span class=\"badge badge-",
      "\">",
      "</span></td></tr>"
    ]

    %{
      "0" => %{
        "d" =>
          for i <- 1..rows do
            [
              "#{i}",
              "#{i}",
              "item-#{:rand.uniform(99_999)}",
              Enum.random(~w(ok warn error)),
              word()
            ]
          end,
        "s" => static
      },
      "1" => "<h1 class=\"text-xl\">Items (#{rows})</h1>",
      "title" => "Items \u2014 \"dashboard\""
    }
  end

  # A 65-byte API reply.
  defp small_object,
    do: %{"id" => 12_345, "ok" => true, "name" => "Ana Müller", "tags" => ["a", "b"]}

  def nested(0), do: %{"leaf" => [1, "two", 3.0]}
  def nested(n), do: %{"level" => nested(n - 1)}

  defp pad(n) when n < 10, do: "0#{n}"
  defp pad(n), do: "#{n}"
end
