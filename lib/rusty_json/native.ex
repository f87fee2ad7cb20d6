defmodule RustyJson.Native do
  @moduledoc false
  # Loads the NIF built by the `:rusty_json_native` Mix compiler from `priv/native/` and declares its functions.
  # The Elixir bodies below run only when the library failed to load; they raise with the reason.

  @on_load :load_nif
  @library ~c"native/rustyjson_nif"

  @doc false
  def load_nif do
    case {:code.priv_dir(:rusty_json), :persistent_term.get({__MODULE__, :built_for}, nil)} do
      {{:error, reason}, _} ->
        remember_failure("priv dir of :rusty_json not found (#{inspect(reason)})")

      # Compiling for another machine (the Mix compiler says so): its library is for the release, not this VM.
      {_, {target, why}} ->
        :persistent_term.put(
          {__MODULE__, :load_error},
          "the RustyJson NIF was installed for #{target} (#{why}), not for this VM"
        )

        :ok

      {priv, nil} ->
        priv |> :filename.join(@library) |> load_from() |> handle_load()
    end
  end

  @doc false
  # Returns :ok or {:error, message} for the library at `path` (without extension: `load_nif` adds the system's,
  # `.dll` on Windows, `.so` elsewhere).
  @spec load_from(charlist() | String.t()) :: :ok | {:error, String.t()}
  def load_from(path) do
    case :erlang.load_nif(to_charlist(path), 0) do
      :ok ->
        :ok

      {:error, {:reload, _}} ->
        :ok

      {:error, {kind, text}} ->
        {:error,
         """
         could not load the RustyJson NIF from #{path}#{extension()} (#{kind}): #{text}
         The library is missing or was built for another Erlang/OTP or architecture. Rebuild it with \
         `mix compile --force` (this runs cargo), or `make test` on a fresh machine.\
         """}
    end
  end

  defp extension, do: if(match?({:win32, _}, :os.type()), do: ".dll", else: ".so")

  # `config :rusty_json, max_term_bytes: n`: the ceiling on a decoded term's memory (else learned by the NIF).
  @max_term_bytes Application.compile_env(:rusty_json, :max_term_bytes)

  # `config :rusty_json, fast_paths: :on | :off`: the fast paths' gate (`RustyJson.Native.Gate`).
  @fast_paths Application.compile_env(:rusty_json, :fast_paths)

  defp handle_load(:ok) do
    # The gate first: the NIF learns no layout (nor the map order) until told whether it may use one.
    {open?, reason} = gate()
    :persistent_term.put({__MODULE__, :fast_paths_gate}, {open?, reason})
    if message = RustyJson.Native.Gate.warning(reason), do: IO.warn(message, [])

    # Here, before any other process can call the module, and on a dirty CPU scheduler: learning takes about a
    # millisecond, which the first encode or decode would otherwise spend on a normal one.
    learn_layout(open?)
    learn_map_order()
    if @max_term_bytes, do: configure_max_term_bytes(@max_term_bytes)
    :ok
  end

  defp handle_load({:error, message}), do: remember_failure(message)

  # `RUSTYJSON_GATE_OTP_RELEASE` stands for the running release in the gate only, for the test of a release
  # newer than any tested (test/rusty_json/native_gate_test.exs); nothing else reads it.
  defp gate do
    release =
      System.get_env("RUSTYJSON_GATE_OTP_RELEASE") ||
        List.to_string(:erlang.system_info(:otp_release))

    RustyJson.Native.Gate.decide(release, System.get_env("RUSTYJSON_FAST_PATHS"), @fast_paths)
  end

  @doc false
  # Maps of more than 32 keys are written in `Map.to_list/1` order (Jason's), which the NIF learns from the
  # running VM: a 64-key map and its keys as `:maps.to_list/1` lists them (`map_order.rs`).
  @spec learn_map_order() :: :ok
  def learn_map_order do
    probe = :maps.from_list(for i <- 1..64, do: {i, i})
    order = learn_map_order(probe, for({key, _} <- :maps.to_list(probe), do: key))
    :persistent_term.put({__MODULE__, :map_order}, order)
    :ok
  end

  @doc false
  # How the NIF walks a map of more than 32 keys to list it as `Map.to_list/1` does: `:from_head`,
  # `:from_tail`, or `:unknown` (then Elixir lists such maps itself).
  @spec map_order() :: :from_head | :from_tail | :unknown
  def map_order, do: :persistent_term.get({__MODULE__, :map_order}, :unknown)

  # The module still loads, so the stubs can raise the reason instead of an opaque "module not available".
  defp remember_failure(message) do
    :persistent_term.put({__MODULE__, :load_error}, message)
    IO.warn(message, [])
    :ok
  end

  @doc false
  @spec load_error() :: String.t() | nil
  def load_error, do: :persistent_term.get({__MODULE__, :load_error}, nil)

  @doc false
  @spec loaded?() :: boolean()
  def loaded?, do: false

  @doc """
  What the NIF learned of the running VM: its OTP release and whether each fast path is on.

  Each fast path rests on a term layout the NIF learns from terms the running VM makes and checks once, when the
  library loads, on a dirty CPU scheduler (`native/rustyjson_nif/src/term/`): `heap_binaries`, `flat_maps`,
  `small_integers` and `floats` (terms the decoder writes directly), `env_heap` (the memory for them taken from the
  caller's heap by moving its top, as erl_nif does itself, and the unused rest given back), `hash_maps` (large
  objects of a shape seen before written from the VM's own trie), `hashed_maps` (other objects of more than 32 keys
  laid out from the VM's own hash of each key, `enif_hash`; checked against maps of binary keys the VM builds), `encode_reads` (terms the encoder reads by their bits), `binary_reads`
  (short binaries the encoder reads by their bits), `held_binary_reads` (longer binaries, refc and, from OTP 27,
  sub-binaries, read by their bits: where their bytes and length lie is searched among a few word positions and
  kept only if it reads every probe as `enif_inspect_binary` does), `sub_binary_reads` (sub-binaries among them:
  from OTP 27 directly; before, through the original binary they name, learned and checked the same way; one
  being appended to still goes through erl_nif), `hash_map_reads` (maps of more than 32 keys the encoder reads
  from their tries, not through the NIF iterator), and `map_order` (the direction in which the VM lists maps of more
  than 32 keys). A path whose layout does not hold is off, and the plain erl_nif calls do its work.

  They engage only on the Erlang/OTP releases they were tested on, 25 through 29 (`RustyJson.Native.Gate`); on a
  later one they stay off, with a warning at load, unless `RUSTYJSON_FAST_PATHS=on` in the VM's environment or
  `config :rusty_json, fast_paths: :on` engages them knowingly. `RUSTYJSON_FAST_PATHS=off` (or the config's `:off`)
  switches them all off. `fast_paths_gate` says whether the gate let them engage (`:on` or `:off`) and
  `fast_paths_reason` why: `:tested_release`, `{:untested_release, release}`, `:forced_on` or `:forced_off`.

  It also gives `max_term_bytes`, the ceiling on a decoded term's memory (a decode past it is a
  `RustyJson.DecodeError`), and `memory`, what it was learned from: `{bytes, source}`, the least of the process's
  address-space limit (`:address_space`), its cgroup's memory limit (`:cgroup`) and the machine's physical
  memory (`:physical`); a term may take a sixteenth of it. `config :rusty_json, max_term_bytes: n` sets it.
  """
  @spec info() :: %{
          otp_release: String.t(),
          fast_paths: %{atom() => boolean()},
          fast_paths_gate: :on | :off,
          fast_paths_reason: RustyJson.Native.Gate.reason(),
          max_term_bytes: pos_integer(),
          memory: {pos_integer(), atom()}
        }
  def info do
    {max_term_bytes, memory, source} = term_ceiling()
    {open?, reason} = :persistent_term.get({__MODULE__, :fast_paths_gate})

    %{
      otp_release: List.to_string(:erlang.system_info(:otp_release)),
      fast_paths: Map.new(fast_paths()),
      fast_paths_gate: if(open?, do: :on, else: :off),
      fast_paths_reason: reason,
      max_term_bytes: max_term_bytes,
      memory: {memory, source}
    }
  end

  @doc false
  def term_ceiling, do: not_loaded()

  @doc false
  def configure_max_term_bytes(_bytes), do: not_loaded()

  @doc false
  def fast_paths, do: not_loaded()

  @doc false
  # At load, on a dirty CPU scheduler: tells the NIF whether the gate is open (`RustyJson.Native.Gate`; shut, it
  # learns no layout and every fast path is off), then `fast_paths/0`, learning the term layout.
  def learn_layout(_open?), do: not_loaded()

  @doc false
  # The kind of scheduler that learned the term layout (`:dirty_cpu` when loading did), or nil when not yet.
  def layout_learned_on, do: not_loaded()

  @doc false
  def encode(_term, _opts), do: not_loaded()

  @doc false
  # `compress:`: `json` (a binary) as a gzip binary at `level` (0..9), in slices of the calling scheduler.
  def gzip(_json, _level), do: not_loaded()

  @doc false
  def learn_map_order(_map, _keys), do: not_loaded()

  @doc false
  def decode(_input, _opts), do: not_loaded()

  @doc false
  # The formatter: the laid-out binary, `:dirty` (`format/6` only: a large output), or `{:error, reason}` for an
  # output of more than `max` bytes or one memory cannot hold.
  def format(_iodata, _indent, _line, _record, _after_colon, _max), do: not_loaded()

  @doc false
  def format_dirty(_iodata, _indent, _line, _record, _after_colon, _max), do: not_loaded()

  @doc false
  # `RustyJson.Encoder.Fallback`: JSON text (a binary) written again with the encoder's options (compact):
  # strings in the escape mode, objects sorted with `sort_keys`, repeated keys refused with `maps: :strict`.
  def rewrite(_text, _opts), do: not_loaded()

  @doc false
  def rewrite_dirty(_text, _opts), do: not_loaded()

  @doc false
  # A derived struct's template and its id (`RustyJson.Encoder.Templates`).
  def register_template(_module, _id, _all_keys, _fields, _keys), do: not_loaded()

  @doc false
  # Forgets the templates of these `{module, id}` pairs (stale: `RustyJson.Encoder.Templates`).
  def forget_templates(_used), do: not_loaded()

  @doc false
  def allocator_reset_peak, do: not_loaded()

  @doc false
  def allocator_peak, do: not_loaded()

  @doc false
  # `{checkpoints, frames_saved, frames_restored}`: how many times encode stopped a walk to continue it later,
  # the open containers' frames those checkpoints wrote, and the frames taken up again (for tests that bound this
  # work by count: deep nesting must cost each slice O(1), not O(depth)).
  def encode_stats, do: not_loaded()
  def decode_dirty(_input, _opts), do: not_loaded()

  @doc false
  def decode_detached(_input, _opts, _ref), do: not_loaded()

  @doc false
  # `RustyJson.Stream`: a splitter resource for `:documents` or `:array_items`.
  def splitter_new(_mode), do: not_loaded()

  @doc false
  # The next chunk (at most 64 KiB): `{spans, values, open_start | nil, {position, line} | nil}`, spans a binary
  # of big-endian 64-bit (start, end, line) triples; with decode options (not nil), the items the NIF decoded as
  # it found them are `values` (after a span continued from the last chunk, before the other spans).
  def split_chunk(_splitter, _chunk, _opts), do: not_loaded()

  @doc false
  # Decodes the items of `spans` that lie in `slice` (at stream offset `base`) with the NIF's decode options:
  # `{values, spans_left}`, values in order (those left are decoded one by one with `decode/2`).
  def decode_items(_slice, _base, _spans, _opts), do: not_loaded()

  @doc false
  # The end of the stream: `{spans, open?, error | nil, found}`, the error `{position, line}` or (in the envelope
  # around an array at a path) `{position, line, bytes}`, `found` `:array`, `:missing` or `:not_an_array`.
  def split_finish(_splitter), do: not_loaded()

  @doc false
  # A splitter for `{:at, tokens, native_opts}`: `{array_start, array_end}` as far as reached (nil before).
  def splitter_marks(_splitter), do: not_loaded()

  @doc false
  # `RustyJson.get/3`: `{:ok, [{start, stop} | nil]}` for each pointer (a list of unescaped tokens) of `pointers`
  # in `input`, the whole document validated; or `{:error, reason}` as `decode/2`'s. `opts` is the decode options'
  # native term, `duplicates` `:first`, `:last` or `:error`.
  def locate(_input, _pointers, _opts, _duplicates), do: not_loaded()

  # Bytes of the prefix `aligned/1` probes: past the 64 bytes up to which the VM may copy a part of a binary into
  # one of its own (from OTP 27), so the prefix keeps the input's bit offset (`aligned::PROBE_BYTES` in the NIF).
  @probe_bytes 128

  @doc false
  # `input` when its bytes start on a byte boundary, else an aligned copy made on a dirty CPU scheduler. A binary
  # made by bit-level matching (`<<_::3, rest::binary-size(n), _::5>>`) can start at a bit offset; erl_nif then
  # reads it through a copy that lasts one NIF call, so a decode spanning many calls would copy it at each one.
  # The probe looks at a prefix only: the same cost at any size.
  @spec aligned(binary()) :: binary()
  def aligned(input) when byte_size(input) > @probe_bytes do
    if at_bit_offset?(binary_part(input, 0, @probe_bytes)), do: realign(input), else: input
  end

  def aligned(input) when is_binary(input) do
    if at_bit_offset?(input), do: realign(input), else: input
  end

  @doc false
  # Whether the binary `probe` starts at a bit offset (two inspections give two different copies).
  def at_bit_offset?(_probe), do: not_loaded()

  @doc false
  # An aligned copy of the binary `input` (dirty CPU scheduler).
  def realign(_input), do: not_loaded()

  @doc false
  # How many aligned copies of inputs the NIF made since loading.
  def aligned_copies, do: not_loaded()

  defp not_loaded do
    :erlang.nif_error({:rusty_json_nif_not_loaded, load_error()})
  end
end
