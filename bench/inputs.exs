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

  def nested(0), do: %{"leaf" => [1, "two", 3.0]}
  def nested(n), do: %{"level" => nested(n - 1)}

  defp pad(n) when n < 10, do: "0#{n}"
  defp pad(n), do: "#{n}"
end
