defprotocol RustyJson.Encoder do
  @moduledoc """
  Protocol for encoding a value to JSON, as `Jason.Encoder`.

  Maps, lists, binaries, atoms and numbers are encoded natively; this protocol is how structs take part. Derive it:

      @derive {RustyJson.Encoder, only: [:id, :name]}
      defstruct [:id, :name, :password_hash]

  (`@derive RustyJson.Encoder` encodes every field; `except: [...]` leaves some out), or implement `encode/2`,
  returning iodata, with the helpers of `RustyJson.Encode`:

      defimpl RustyJson.Encoder, for: Money do
        def encode(%Money{amount: a, currency: c}, opts),
          do: RustyJson.Encode.string("\#{a} \#{c}", opts)
      end

  Date, Time, NaiveDateTime and DateTime encode as ISO 8601 strings and Decimal as its `:normal` string; those
  are handled before the protocol, like Jason does (a Decimal whose `:normal` string would add more than 1024 zeros
  to its digits is an error, or an object with `large_decimals: :object`: see `RustyJson.encode/2`).

  A derived implementation is a compiled template (fields in order, keys escaped at compile time) that the NIF
  writes itself once the module is registered (on first use), in the same pass as the rest of the document.

  A struct with no implementation of this protocol is encoded, in this order, with its `Jason.Encoder`
  implementation (Jason loaded; `Jason.encode_to_iodata!/1`), so an app can switch libraries before it rewrites its
  `@derive Jason.Encoder`s; else with its `JSON.Encoder` implementation (Elixir 1.18+: `@derive JSON.Encoder`,
  `defimpl JSON.Encoder`, as Phoenix apps and libraries now write them), whose nested values RustyJson writes with
  the call's options; else it raises `Protocol.UndefinedError`. The call's options hold in what such an
  implementation returns: with `escape:` other than `:json`, `sort_keys: true` or `maps: :strict`, the text is read
  back and written again, every string (keys included) escaped in the mode, every object's members sorted by their
  unescaped keys (ordered objects and fragments inside the struct too: the text does not tell them from maps), and
  an object with a repeated key an error. Text that is not valid JSON is then a `RustyJson.EncodeError` naming the
  struct's module; with the default options the text is written as it is, at no cost.

  What an implementation of this protocol writes itself, rather than through `RustyJson.Encode`, is written as
  given (as in Jason): it is not escaped again nor sorted.

  An implementation may also return a plain term, as RustyJson 0.3.10 allowed: a map, a list that is not iodata,
  a number or an atom is encoded again as a value, with the call's options. What cannot be encoded (a tuple, a
  pid, the struct itself) raises `ArgumentError` naming the implementation. Iodata stays the fast way.

      defimpl RustyJson.Encoder, for: Money do
        def encode(%Money{amount: a, currency: c}, _opts), do: %{amount: a, currency: to_string(c)}
      end

  `@derive` takes `:only` or `:except` (not both); any other option is a compile error, so a misspelt `only:`
  cannot leak every field.
  """

  @fallback_to_any true

  @typedoc "The options handed to `encode/2`; pass them on to `RustyJson.Encode` functions."
  @type opts :: term()

  @doc """
  Encodes `value` to JSON iodata, with the helpers of `RustyJson.Encode` and the `opts` received. A result that
  is not iodata (a map, a list of other terms, a number) is encoded again as a value, as RustyJson 0.3.10 did.

      iex> RustyJson.Encoder.encode(%{a: 1}, RustyJson.Encode.opts()) |> IO.iodata_to_binary()
      ~s({"a":1})
  """
  @spec encode(t(), opts()) :: iodata()
  def encode(value, opts)
end

defimpl RustyJson.Encoder, for: Any do
  defmacro __deriving__(module, struct, opts) do
    fields = RustyJson.Encoder.Derive.fields!(struct, opts)
    all_keys = Map.keys(struct)
    keys = Enum.map(fields, &RustyJson.Encoder.Derive.literal_key!/1)
    vars = Enum.map(1..length(fields)//1, &Macro.var(:"v#{&1}", __MODULE__))
    opts_var = Macro.var(:opts, __MODULE__)
    pattern = Enum.zip(fields, vars)
    body = RustyJson.Encoder.Derive.struct_body(keys, vars, opts_var)
    template = RustyJson.Encoder.Templates.template(all_keys, fields, keys)

    quote do
      defimpl RustyJson.Encoder, for: unquote(module) do
        @doc false
        # The compiled template the NIF writes this struct from: the struct's keys, the written fields in order,
        # their keys as written, and the id of these contents (`RustyJson.Encoder.Templates`).
        def __template__, do: unquote(Macro.escape(template))

        # When this module is loaded again (code reloading in development), the NIF has its template at once
        # (encodes check what they used against the protocol's dispatch either way). Only when the NIF is already
        # loaded: on_load must not load other modules (embedded mode).
        @on_load :__rusty_json_reload__
        @doc false
        def __rusty_json_reload__ do
          if :erlang.module_loaded(RustyJson.Native) do
            {all_keys, fields, keys, id} = __template__()

            try do
              RustyJson.Native.register_template(unquote(module), id, all_keys, fields, keys)
            catch
              _, _ -> :ok
            end
          end

          :ok
        end

        # The struct's own shape: one native encode from the template (registered on first use).
        def encode(%{unquote_splicing(pattern)} = struct, opts)
            when map_size(struct) == unquote(length(all_keys)),
            do: RustyJson.Encode.value(struct, opts)

        def encode(%{unquote_splicing(pattern)}, unquote(opts_var)), do: unquote(body)
      end
    end
  end

  # No implementation of this protocol: Jason's, then Elixir's `JSON.Encoder` (1.18+), then an error.
  def encode(%_{} = struct, opts) do
    case RustyJson.Encoder.Fallback.encode(struct, opts) do
      {:ok, iodata} ->
        iodata

      :error ->
        raise Protocol.UndefinedError,
          protocol: @protocol,
          value: struct,
          description: RustyJson.Encoder.Derive.struct_description()
    end
  end

  def encode(value, _opts) do
    raise Protocol.UndefinedError,
      protocol: @protocol,
      value: value,
      description: "RustyJson.Encoder protocol must always be explicitly implemented"
  end
end

defimpl RustyJson.Encoder, for: [Atom, Integer, Float, List, Map] do
  def encode(value, opts), do: RustyJson.Encode.value(value, opts)
end

defimpl RustyJson.Encoder, for: BitString do
  def encode(binary, opts) when is_binary(binary), do: RustyJson.Encode.string(binary, opts)

  def encode(bitstring, _opts) do
    raise Protocol.UndefinedError,
      protocol: @protocol,
      value: bitstring,
      description: "cannot encode a bitstring to JSON"
  end
end

# RustyJson 0.3 wrote tuples as arrays and URIs as their strings without being asked: with
# `config :rusty_json, tuples_and_uris: true` (read at compile time) so does RustyJson. (Jason raises for both.)
if Application.compile_env(:rusty_json, :tuples_and_uris, false) do
  defimpl RustyJson.Encoder, for: Tuple do
    def encode(tuple, opts), do: RustyJson.Encode.list(Tuple.to_list(tuple), opts)
  end

  defimpl RustyJson.Encoder, for: URI do
    def encode(uri, opts), do: RustyJson.Encode.string(URI.to_string(uri), opts)
  end
end

defimpl RustyJson.Encoder, for: [Date, Time, NaiveDateTime, DateTime] do
  def encode(value, _opts), do: [?", @for.to_iso8601(value), ?"]
end

defimpl RustyJson.Encoder, for: RustyJson.Fragment do
  def encode(%{iodata: nil, encode: encode} = f, opts)
      when is_function(encode, 1) and map_size(f) == 3,
      do: encode.(opts)

  def encode(%{iodata: nil, encode: iodata} = f, _opts)
      when (is_binary(iodata) or is_list(iodata)) and map_size(f) == 3,
      do: iodata

  def encode(%{iodata: iodata} = f, _opts)
      when (is_binary(iodata) or is_list(iodata)) and map_size(f) == 3,
      do: iodata

  def encode(fragment, _opts), do: raise(RustyJson.Encode.malformed(fragment))
end

defmodule RustyJson.Encoder.Derive do
  @moduledoc false
  # Compile-time checks of `@derive RustyJson.Encoder` (Jason's rules and messages).

  @doc false
  # A derived struct's body: fields in the given order, or in their keys' byte order under `sort_keys: true`
  # (sort_keys sorts every level, derived structs included; literal keys are plain ASCII, so their written bytes
  # order as their names).
  def struct_body(keys, vars, opts) do
    body = body(keys, vars, opts)

    {sorted_keys, sorted_vars} =
      keys |> Enum.zip(vars) |> Enum.sort_by(fn {key, _} -> unquoted(key) end) |> Enum.unzip()

    if sorted_keys == keys do
      body
    else
      sorted = body(sorted_keys, sorted_vars, opts)

      quote do
        if RustyJson.EncodeOptions.sort_keys?(unquote(opts)),
          do: unquote(sorted),
          else: unquote(body)
      end
    end
  end

  # A literal key as written (`"name"`) without its quotes: `"a"` sorts before `"a b"` by name, not by `"a\""`.
  defp unquoted(key), do: binary_part(key, 1, byte_size(key) - 2)

  @doc false
  # The derived `encode/2` body: iodata with the keys (and punctuation) as literals between the values.
  def body([], [], _opts), do: "{}"

  def body(keys, vars, opts) do
    parts =
      keys
      |> Enum.zip(vars)
      |> Enum.with_index()
      |> Enum.flat_map(fn {{key, var}, i} ->
        prefix = if i == 0, do: "{" <> key <> ":", else: "," <> key <> ":"
        [prefix, quote(do: RustyJson.Encode.value(unquote(var), unquote(opts)))]
      end)

    parts ++ ["}"]
  end

  @doc false
  def fields!(struct, opts) do
    check_options!(opts)
    fields = Map.keys(struct) -- [:__struct__]

    selected =
      cond do
        only = Keyword.get(opts, :only) ->
          check_known!(:only, only, fields)
          only

        except = Keyword.get(opts, :except) ->
          check_known!(:except, except, fields)
          fields -- except

        true ->
          fields
      end

    Enum.each(selected, &literal_key!/1)
    selected
  end

  @doc false
  # A key fixed at compile time, checked (Jason's rule and message) and written as JSON: `"key"`.
  def literal_key!(field) do
    key = to_string(field)

    for <<byte <- key>>, byte < 0x20 or byte > 0x7E or byte in [?\\, ?/, ?"] do
      raise RustyJson.EncodeError,
        message: "invalid byte #{inspect(byte, base: :hex)} in literal key: #{inspect(key)}"
    end

    "\"" <> key <> "\""
  end

  # A misspelt option would otherwise encode every field (jason#183): only `:only` or `:except`, one of them.
  defp check_options!(opts) do
    unless Keyword.keyword?(opts) do
      raise ArgumentError,
            "@derive RustyJson.Encoder expects a keyword list with :only or :except, got: #{inspect(opts)}"
    end

    case Keyword.keys(opts) -- [:only, :except] do
      [] ->
        :ok

      unknown ->
        raise ArgumentError,
              "unknown option(s) #{inspect(Enum.uniq(unknown))} for @derive RustyJson.Encoder; " <>
                "expected :only or :except"
    end

    if Keyword.has_key?(opts, :only) and Keyword.has_key?(opts, :except) do
      raise ArgumentError, "@derive RustyJson.Encoder takes :only or :except, not both"
    end

    for {option, keys} <- opts, not (is_list(keys) and Enum.all?(keys, &is_atom/1)) do
      raise ArgumentError,
            "the #{inspect(option)} option of @derive RustyJson.Encoder expects a list of field names " <>
              "(atoms), got: #{inspect(keys)}"
    end

    :ok
  end

  defp check_known!(option, keys, fields) do
    case keys -- fields do
      [] ->
        :ok

      extra ->
        raise ArgumentError,
              "`#{inspect(option)}` specified keys (#{inspect(extra)}) that are not defined in " <>
                "defstruct: #{inspect(fields)}"
    end
  end

  @doc false
  def struct_description do
    """
    RustyJson.Encoder protocol must always be explicitly implemented.

    If you own the struct, you can derive the implementation specifying \
    which fields should be encoded to JSON:

        @derive {RustyJson.Encoder, only: [....]}
        defstruct ...

    It is also possible to encode all fields, although this should be \
    used carefully to avoid accidentally leaking private information \
    when new fields are added:

        @derive RustyJson.Encoder
        defstruct ...

    Finally, if you don't own the struct you want to encode to JSON, \
    you may use Protocol.derive/3 placed outside of any module:

        Protocol.derive(RustyJson.Encoder, NameOfTheStruct, only: [...])
        Protocol.derive(RustyJson.Encoder, NameOfTheStruct)
    """
  end
end
