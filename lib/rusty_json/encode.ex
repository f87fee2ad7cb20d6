defmodule RustyJson.Encode do
  @moduledoc """
  Encoding helpers for `RustyJson.Encoder` implementations (as `Jason.Encode`'s): each returns the JSON of its
  argument as iodata (a binary) and raises `RustyJson.EncodeError` or `Protocol.UndefinedError` on failure.
  Pass on the `opts` your `encode/2` received.
  """

  alias RustyJson.{EncodeDecimal, EncodeError, EncodeOptions, Fragment, Native, OrderedObject}
  alias RustyJson.Encoder.Templates

  @typedoc "Encoder options as `RustyJson.Encoder.encode/2` receives them (or encode options, as a keyword list or map)."
  @type opts :: EncodeOptions.t() | keyword() | map()

  @doc """
  Encoder options with the defaults, or with an escape mode (`:json`, `:javascript_safe`, `:html_safe`,
  `:unicode_safe`), as RustyJson 0.3.10's `opts/1` built them: pass them to any function of this module.

      iex> RustyJson.Encode.string("a<b", RustyJson.Encode.opts(:html_safe)) |> IO.iodata_to_binary()
      ~S("a\\u003Cb")
      iex> RustyJson.Encode.map(%{a: 1}, RustyJson.Encode.opts()) |> IO.iodata_to_binary()
      ~s({"a":1})
  """
  @spec opts(atom()) :: EncodeOptions.t()
  def opts(escape \\ :json) when is_atom(escape),
    do: [escape: escape] |> EncodeOptions.new() |> EncodeOptions.compact()

  @doc """
  Encodes any encodable value.

      iex> RustyJson.Encode.value(%{a: [1, nil]}, []) |> IO.iodata_to_binary()
      ~s({"a":[1,null]})
  """
  @spec value(term(), opts()) :: iodata()
  def value(value, opts) do
    case run(value, opts |> EncodeOptions.new() |> EncodeOptions.compact()) do
      {:ok, json} -> json
      {:error, exception} -> raise exception
    end
  end

  @doc """
  Encodes an atom (`nil`, `true`, `false` or a string).

      iex> RustyJson.Encode.atom(:ok, []) |> IO.iodata_to_binary()
      ~s("ok")
  """
  @spec atom(atom(), opts()) :: iodata()
  def atom(atom, opts) when is_atom(atom), do: value(atom, opts)

  @doc """
  Encodes a string with the escape mode of `opts`.

      iex> RustyJson.Encode.string("a\\u2028", escape: :javascript_safe) |> IO.iodata_to_binary()
      ~S("a\\u2028")
  """
  @spec string(String.t(), opts()) :: iodata()
  def string(string, opts) when is_binary(string), do: value(string, opts)

  @doc """
  Encodes an integer.

      iex> RustyJson.Encode.integer(-42) |> IO.iodata_to_binary()
      "-42"
  """
  @spec integer(integer()) :: iodata()
  def integer(integer) when is_integer(integer), do: Integer.to_string(integer)

  @doc """
  Encodes a float (the shortest digits that round-trip).

      iex> RustyJson.Encode.float(0.1) |> IO.iodata_to_binary()
      "0.1"
  """
  @spec float(float()) :: iodata()
  def float(float) when is_float(float), do: value(float, [])

  @doc """
  Encodes a list as an array.

      iex> RustyJson.Encode.list([1, "a"], []) |> IO.iodata_to_binary()
      ~s([1,"a"])
  """
  @spec list(list(), opts()) :: iodata()
  def list(list, opts) when is_list(list), do: value(list, opts)

  @doc """
  Encodes a map as an object (keys in `Map.to_list/1` order).

      iex> RustyJson.Encode.map(%{"id" => 1}, []) |> IO.iodata_to_binary()
      ~s({"id":1})
  """
  @spec map(map(), opts()) :: iodata()
  def map(map, opts) when is_map(map), do: value(map, opts)

  @doc """
  Encodes a keyword list as an object, keeping its order.

      iex> RustyJson.Encode.keyword([b: 1, a: 2], []) |> IO.iodata_to_binary()
      ~s({"b":1,"a":2})
  """
  @spec keyword(keyword(), opts()) :: iodata()
  def keyword(keyword, opts) when is_list(keyword), do: ordered(keyword, opts)

  @doc """
  Encodes a struct (through `RustyJson.Encoder`, or as Jason does for dates and decimals).

      iex> RustyJson.Encode.struct(~D[2024-05-01], []) |> IO.iodata_to_binary()
      ~s("2024-05-01")
  """
  @spec struct(struct(), opts()) :: iodata()
  def struct(%_{} = struct, opts), do: value(struct, opts)

  @doc """
  Encodes `{key, value}` pairs as an object in the given order (keys as map keys are converted).

      iex> RustyJson.Encode.ordered([{"z", 1}, {:a, 2}], []) |> IO.iodata_to_binary()
      ~s({"z":1,"a":2})
  """
  @spec ordered([{term(), term()}], opts()) :: iodata()
  def ordered(pairs, opts) when is_list(pairs), do: value(%OrderedObject{values: pairs}, opts)

  @doc false
  # The whole encode: one NIF pass. Structs the NIF cannot write come back as holes filled here; only unusual
  # map keys (and errors met while holes are pending) make the term be resolved here and the NIF run again.
  # `compress:` (a fifth element) compresses the final output, holes filled, with one more NIF call.
  @spec run(term(), EncodeOptions.t()) :: {:ok, binary()} | {:error, Exception.t()}
  def run(term, opts) when tuple_size(opts) > 4 do
    case EncodeOptions.split_compression(opts) do
      {opts, nil} ->
        result(Native.encode(term, opts), term, opts)

      {opts, {:gzip, level}} ->
        with {:ok, json} <- run(term, opts), do: gzip(json, level)
    end
  end

  def run(term, opts), do: result(Native.encode(term, opts), term, opts)

  defp gzip(json, level) do
    case Native.gzip(json, level) do
      gzip when is_binary(gzip) -> {:ok, gzip}
      {:error, reason} -> failure(reason)
    end
  end

  @doc false
  # What a NIF result means for `term`: the JSON, an error, or "Elixir must resolve this first".
  @spec result(term(), term(), EncodeOptions.t()) :: {:ok, binary()} | {:error, Exception.t()}
  def result(json, _term, _opts) when is_binary(json), do: {:ok, json}
  def result({:holes, parts}, _term, opts), do: fill_holes(parts, EncodeOptions.compact(opts))

  def result({:error, :elixir}, term, opts) when is_tuple(elem(opts, 2)) do
    # Pretty output with structs left for Elixir: encode compactly (holes filled), then lay out as Jason does
    # (its `pretty:` is the Formatter on the compact text, which keeps the keys' order).
    {indent, line, colon} = elem(opts, 2)

    case result(
           Native.encode(term, EncodeOptions.compact(opts)),
           term,
           EncodeOptions.compact(opts)
         ) do
      {:ok, json} ->
        RustyJson.Formatter.layout(
          json,
          {indent, line, line, colon},
          EncodeOptions.max_output(opts)
        )

      error ->
        error
    end
  end

  def result({:error, :elixir}, term, opts), do: run_resolved(term, opts)
  def result({:error, reason}, _term, _opts), do: failure(reason)

  # Written from derived structs' templates: taken if each is the template of what the protocol dispatches its
  # struct to now; else those are forgotten and the term is encoded again (`RustyJson.Encoder.Templates`).
  def result({:templates, used, result}, term, opts) do
    case Templates.stale(used) do
      [] -> result(result, term, opts)
      _stale -> result(Native.encode(term, opts), term, opts)
    end
  end

  defp run_resolved(term, opts) do
    resolved = resolve(term, EncodeOptions.compact(opts))

    resolved_result(Native.encode(resolved, opts), term, opts)
  rescue
    e in [EncodeError, Protocol.UndefinedError] -> encode_failure(e, __STACKTRACE__)
  end

  defp resolved_result(json, _term, _opts) when is_binary(json), do: {:ok, json}

  defp resolved_result({:templates, used, inner}, term, opts) do
    case Templates.stale(used) do
      [] -> resolved_result(inner, term, opts)
      _stale -> run_resolved(term, opts)
    end
  end

  defp resolved_result({:error, :elixir}, term, _opts),
    do: {:error, exception({:unsupported, term})}

  defp resolved_result({:error, reason}, _term, _opts), do: failure(reason)

  # A fragment whose iodata is not iodata raises, from `encode/2` too: Jason's `encode/2` raises ArgumentError there
  # (its `IO.iodata_to_binary/1` of the output). Other failures are returned.
  defp failure({:unsupported, %Fragment{iodata: iodata}} = reason) when iodata != nil,
    do: raise(exception(reason))

  defp failure(reason), do: {:error, exception(reason)}

  # The NIF wrote everything but some structs (unregistered derived structs, custom implementations, fragment
  # functions): `parts` alternates its output's pieces with those terms, written here through the protocol.
  defp fill_holes(parts, opts) do
    {iodata, _registered} = Enum.map_reduce(parts, %{}, &hole(&1, &2, opts))
    {:ok, holes_to_binary(iodata, parts, opts)}
  rescue
    e in [EncodeError, Protocol.UndefinedError] -> encode_failure(e, __STACKTRACE__)
  end

  # A fragment function may have returned something that is not iodata: raise naming it. An encoder
  # implementation's list that is not iodata is a plain term, encoded here (RustyJson 0.3.10's way). Only the
  # error path looks for them, so iodata results cost nothing more.
  defp holes_to_binary(iodata, parts, opts) do
    IO.iodata_to_binary(iodata)
  rescue
    e in ArgumentError ->
      if Enum.all?(iodata, &iodata?/1), do: reraise(e, __STACKTRACE__)

      parts
      |> Enum.zip(iodata)
      |> Enum.map(fn
        {_part, piece} when is_binary(piece) -> piece
        {%Fragment{}, piece} -> fragment_piece!(piece)
        {%module{}, piece} -> if iodata?(piece), do: piece, else: reencode(module, piece, opts)
        {_part, piece} -> piece
      end)
      |> IO.iodata_to_binary()
  end

  defp fragment_piece!(piece) do
    if iodata?(piece),
      do: piece,
      else: raise(exception({:invalid_iodata, "a RustyJson.Fragment", piece}))
  end

  defp iodata?(piece) do
    _ = IO.iodata_length([piece])
    true
  rescue
    ArgumentError -> false
  end

  defp implementation(module), do: "the RustyJson.Encoder implementation for #{inspect(module)}"

  # What an encoder implementation returned: iodata is written as it is; anything else (a map, a list that is
  # not iodata, a number...) is encoded as a value, as RustyJson 0.3.10 did. Only binaries and lists can be
  # iodata; a list is checked where it is written (`holes_to_binary/3`, or the NIF for a fragment).
  defp implementation_result(%module{} = struct, opts) do
    case RustyJson.Encoder.encode(struct, opts) do
      piece when is_binary(piece) or is_list(piece) -> piece
      other -> reencode(module, other, opts)
    end
  end

  # The struct itself back (or another of its module) would loop: an error, as is what cannot be encoded, both
  # naming the implementation.
  defp reencode(module, %module{} = returned, _opts),
    do: raise(exception({:invalid_iodata, implementation(module), returned}))

  defp reencode(module, returned, opts) do
    value(returned, opts)
  rescue
    e in [EncodeError, Protocol.UndefinedError] ->
      reraise ArgumentError.exception(
                "#{implementation(module)} returned #{inspect(returned)}, which is neither iodata nor " <>
                  "encodable: #{Exception.message(e)}"
              ),
              __STACKTRACE__
  end

  # An encoding failure met in Elixir (resolving structs, filling holes) is returned as the error; a
  # Protocol.UndefinedError of another protocol (e.g. String.Chars for a tuple key) is raised, as Jason does.
  defp encode_failure(%Protocol.UndefinedError{protocol: protocol} = e, stacktrace)
       when protocol != RustyJson.Encoder,
       do: reraise(e, stacktrace)

  defp encode_failure(e, _stacktrace), do: {:error, e}

  # `registered`: the derived modules registered during this call, with their size (`__struct__` included).
  defp hole(binary, registered, _opts) when is_binary(binary), do: {binary, registered}

  defp hole(%module{} = struct, registered, opts)
       when module in [Fragment, Date, Time, NaiveDateTime, DateTime, Decimal] do
    # (A malformed fragment raises ArgumentError in `resolve_struct/2`.)
    %Fragment{iodata: iodata} = resolve_struct(struct, opts)
    {iodata, registered}
  end

  # `protocol: false`: the NIF leaves MapSet, Range and URI (RustyJson 0.3's forms).
  defp hole(%_{} = struct, registered, opts) do
    if EncodeOptions.structs_as_maps?(opts),
      do: {value(RustyJson.Plain.term(struct), opts), registered},
      else: protocol_hole(struct, registered, opts)
  end

  defp protocol_hole(%module{} = struct, registered, opts) do
    case registered do
      # Registered a moment ago: the NIF writes it (a struct of another shape went the protocol's way).
      %{^module => size} when map_size(struct) == size ->
        {value(struct, opts), registered}

      _ ->
        case Templates.register(struct) do
          {:ok, _fields} -> {value(struct, opts), Map.put(registered, module, map_size(struct))}
          :error -> {implementation_result(struct, opts), registered}
        end
    end
  end

  @doc false
  # The error for a `RustyJson.Fragment` or `RustyJson.OrderedObject` that its module's functions did not make:
  # what is wrong, not a MatchError or FunctionClauseError from inside the encoder.
  @spec malformed(map()) :: ArgumentError.t()
  def malformed(%Fragment{} = fragment) do
    ArgumentError.exception(
      "invalid RustyJson.Fragment: expected the fields :encode (a function of arity 1, or iodata) and " <>
        ":iodata (iodata, or nil to call :encode), as RustyJson.Fragment.new/1 makes them, got: " <>
        inspect(fragment)
    )
  end

  def malformed(%OrderedObject{} = object) do
    ArgumentError.exception(
      "invalid RustyJson.OrderedObject: expected the field :values, a list of {key, value} pairs, got: " <>
        inspect(object)
    )
  end

  @doc false
  @spec exception(term()) :: Exception.t()
  def exception({:invalid_byte, _byte, _original} = reason), do: EncodeError.new(reason)
  def exception({:duplicate_key, _key} = reason), do: EncodeError.new(reason)
  def exception({:output_limit, _needed, _limit} = reason), do: EncodeError.new(reason)
  def exception({:out_of_memory, _needed} = reason), do: EncodeError.new(reason)

  def exception({:unsupported, %Fragment{iodata: iodata}}) when iodata != nil,
    do: exception({:invalid_iodata, "a RustyJson.Fragment", iodata})

  def exception({:invalid_iodata, source, iodata}),
    do:
      ArgumentError.exception(
        "invalid iodata in #{source}: #{inspect(iodata)} (not an iodata term)"
      )

  def exception({:unsupported, value}) when is_bitstring(value) do
    %Protocol.UndefinedError{
      protocol: RustyJson.Encoder,
      value: value,
      description: "cannot encode a bitstring to JSON"
    }
  end

  def exception({:unsupported, value}) do
    %Protocol.UndefinedError{
      protocol: RustyJson.Encoder,
      value: value,
      description: "RustyJson.Encoder protocol must always be explicitly implemented"
    }
  end

  def exception({:improper_list, tail}),
    do:
      ArgumentError.exception(
        "cannot encode an improper list (its last tail is #{inspect(tail)})"
      )

  def exception({:badarg, opts}),
    do: ArgumentError.exception("invalid encode options: #{inspect(opts)}")

  # Replaces every struct by a Fragment (through the protocol, or ISO 8601 / Decimal strings as Jason does),
  # calls fragment functions, and turns maps with keys the NIF does not convert (String.Chars) into ordered
  # objects. Map key order is kept: `:maps.map/2` keeps the key set, and ordered objects list `Map.to_list/1`.
  defp resolve(%{__struct__: module} = struct, opts) when is_atom(module),
    do: resolve_struct(struct, opts)

  defp resolve(map, opts) when is_map(map) do
    # A map of more than 32 keys stays a map only if the NIF knows how to list it as `Map.to_list/1` does.
    if Enum.all?(Map.keys(map), &native_key?/1) and
         (map_size(map) <= 32 or Native.map_order() != :unknown) do
      :maps.map(fn _key, value -> resolve(value, opts) end, map)
    else
      %OrderedObject{values: map |> Map.to_list() |> resolve_pairs(opts) |> sort_pairs(opts)}
    end
  end

  defp resolve([head | tail], opts), do: [resolve(head, opts) | resolve_tail(tail, opts)]

  defp resolve(tuple, opts) when is_tuple(tuple) do
    if EncodeOptions.tuples?(opts), do: resolve(Tuple.to_list(tuple), opts), else: tuple
  end

  defp resolve(other, _opts), do: other

  defp resolve_tail(list, opts) when is_list(list), do: resolve(list, opts)
  defp resolve_tail(improper, _opts), do: improper

  defp resolve_pairs(pairs, opts) do
    Enum.map(pairs, fn {key, value} -> {key(key), resolve(value, opts)} end)
  end

  # `sort_keys: true`: a map listed here is sorted here (its pairs are then written in order, as an ordered
  # object's), by the key's string as the NIF converts it; `Enum.sort_by/2` is stable, so keys that convert to
  # the same string keep their `Map.to_list/1` order, as in the NIF.
  defp sort_pairs(pairs, opts) do
    if EncodeOptions.sort_keys?(opts),
      do: Enum.sort_by(pairs, fn {key, _value} -> key_string(key) end),
      else: pairs
  end

  defp key_string(key) when is_binary(key), do: key
  defp key_string(key) when is_atom(key), do: Atom.to_string(key)
  defp key_string(key), do: String.Chars.to_string(key)

  defp native_key?(key), do: is_binary(key) or is_atom(key) or is_integer(key) or is_float(key)

  defp key(key) do
    if native_key?(key), do: key, else: String.Chars.to_string(key)
  end

  defp resolve_struct(%OrderedObject{values: pairs} = object, opts)
       when is_list(pairs) and map_size(object) == 2,
       do: %OrderedObject{values: resolve_pairs(pairs, opts)}

  defp resolve_struct(%OrderedObject{} = object, _opts), do: raise(malformed(object))

  # A fragment's function is called once, here; the NIF writes what it returned.
  defp resolve_struct(%Fragment{iodata: nil, encode: fun} = f, opts)
       when is_function(fun, 1) and map_size(f) == 3,
       do: fragment(fun.(opts))

  # Iodata in `encode` (what earlier RustyJson versions stored there) is still written as it is.
  defp resolve_struct(%Fragment{iodata: nil, encode: iodata} = f, _opts)
       when (is_binary(iodata) or is_list(iodata)) and map_size(f) == 3,
       do: fragment(iodata)

  defp resolve_struct(%Fragment{iodata: iodata} = f, _opts)
       when (is_binary(iodata) or is_list(iodata)) and map_size(f) == 3,
       do: f

  defp resolve_struct(%Fragment{} = fragment, _opts), do: raise(malformed(fragment))

  defp resolve_struct(%module{} = struct, _opts)
       when module in [Date, Time, NaiveDateTime, DateTime],
       do: fragment([?", module.to_iso8601(struct), ?"])

  # Jason's form, unless it would spell out a huge exponent in zeros (`RustyJson.EncodeDecimal`).
  defp resolve_struct(%module{} = decimal, opts) when module == Decimal do
    case EncodeDecimal.form(decimal) do
      :normal -> fragment([?", apply(module, :to_string, [decimal, :normal]), ?"])
      {:too_long, zeros} -> large_decimal(decimal, zeros, opts)
    end
  end

  # A derived struct stays a struct (the NIF writes it from its template) with its written fields resolved;
  # under `protocol: false` every other struct is a plain term (RustyJson 0.3's way).
  defp resolve_struct(struct, opts) do
    if EncodeOptions.structs_as_maps?(opts),
      do: resolve(RustyJson.Plain.term(struct), opts),
      else: resolve_protocol_struct(struct, opts)
  end

  defp resolve_protocol_struct(%module{} = struct, opts) do
    case Templates.register(struct) do
      {:ok, fields} ->
        Enum.reduce(fields, struct, fn field, acc ->
          Map.update!(acc, field, &resolve(&1, opts))
        end)

      :error ->
        case implementation_result(struct, opts) do
          piece when is_list(piece) ->
            if iodata?(piece), do: fragment(piece), else: fragment(reencode(module, piece, opts))

          piece ->
            fragment(piece)
        end
    end
  end

  # `large_decimals: :object`: RustyJson 0.3.10's form, written here (a fragment: holes are filled with iodata).
  defp large_decimal(decimal, zeros, opts) do
    if EncodeOptions.decimal_objects?(opts),
      do: fragment(value(EncodeDecimal.object(decimal), opts)),
      else: raise(EncodeDecimal.error(decimal, zeros))
  end

  defp fragment(iodata), do: %Fragment{iodata: iodata}
end
